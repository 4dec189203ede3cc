package aws

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// catalog is a placeholder until the catalog lands.
type catalog struct{}

func newCatalog(Options, *Clients) *catalog { return &catalog{} }

func (c *catalog) run(ctx context.Context) error { <-ctx.Done(); return nil }

// InstanceTypes lists the types a node class may launch.
func (c *Cloud) InstanceTypes(ctx context.Context, nodeClass client.Object) ([]*cloudprovider.InstanceType, error) {
	return nil, errors.New("not implemented")
}

package aws

import (
	"context"
	"errors"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// launchTemplates is a placeholder until launches land.
type launchTemplates struct{}

func newLaunchTemplates(Options, *Clients) *launchTemplates { return &launchTemplates{} }

// Create launches one instance.
func (c *Cloud) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	return nil, errors.New("not implemented")
}

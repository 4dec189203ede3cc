package clusterapi

// STUB of branch i31-wiring, standing in for the provider that branch i31-provider
// writes: the merger deletes this file. It has the names the operator calls.

import (
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Options configure the provider.
type Options struct {
	ClusterName string
	Client      client.Client
	Powers      Powers
}

// New is the provider; the stub refuses.
func New(Options) (cloudprovider.API, error) {
	return nil, errors.New("the Cluster API provider is not in this build (stub of branch i31-wiring)")
}

// DefaultPowers are the power interfaces Stratos knows; the stub knows none.
func DefaultPowers() Powers { return Powers{} }

package runner

import (
	"context"
	"errors"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stratos-sh/stratos/internal/sim/controlplane"
)

// installClusterAPI installs CAPI's CRDs and webhook configurations and the simulator's
// infrastructure and bootstrap CRDs.
func installClusterAPI(ctx context.Context, cfg *rest.Config, toolsDir string) error {
	return errors.New("clusterapi: not connected yet")
}

// setupProviders runs the simulator's infrastructure and bootstrap providers in the
// simulator's manager, over the fake cloud.
func (c *clusterAPISimCloud) setupProviders(mgr manager.Manager) error {
	return errors.New("clusterapi: not connected yet")
}

// start runs CAPI's core manager and creates the cluster and the templates the node
// classes name.
func (c *clusterAPISimCloud) start(ctx context.Context, cp *controlplane.ControlPlane, toolsDir, workDir string) error {
	return errors.New("clusterapi: not connected yet")
}

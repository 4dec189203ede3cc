package stack

import (
	"context"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// PanickingCatalog is a fake cloud whose instance-type listing panics Panics times, as a
// provider bug would, then answers as the cloud does.
type PanickingCatalog struct {
	*fakecloud.Cloud
	Panics atomic.Int32
}

// InstanceTypes panics while Panics is positive, counting it down.
func (c *PanickingCatalog) InstanceTypes(ctx context.Context, class client.Object) ([]*cloudprovider.InstanceType, error) {
	if c.Panics.Add(-1) >= 0 {
		panic("a provider bug")
	}
	return c.Cloud.InstanceTypes(ctx, class)
}

// Panicked reports whether every panic was spent.
func (c *PanickingCatalog) Panicked() bool { return c.Panics.Load() <= 0 }

// RecoveredPanics reads stratos_controller_panics_total for a loop.
func RecoveredPanics(t testing.TB, loop string) float64 {
	t.Helper()
	return Counter(t, "stratos_controller_panics_total", map[string]string{"controller": loop})
}

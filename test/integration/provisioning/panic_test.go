package provisioning_test

import (
	"testing"
	"time"

	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/test/stack"
)

// A panic in a provisioning decision (here in a provider's instance types) costs that
// decision, not the operator: it is counted, and the next batch gives the pods capacity.
func TestProvisioningRecoversFromAPanic(t *testing.T) {
	f := stack.NewSerialFixture(t, nil)
	cloud := &stack.PanickingCatalog{Cloud: f.Cloud}
	cloud.Panics.Store(1)
	f.Op.Stop()
	f.Opts.Provisioning = provisioning.Options{Resync: 500 * time.Millisecond}
	f.Op = stack.StartOperator(t, f.Env, cloud, f.Opts)
	before := stack.RecoveredPanics(t, "provisioning")
	f.Pool("web", 0, nil)

	pendingPods(f, "default", "web", 2, "1", "1Gi", nil)
	f.Eventually("the next batch launches a claim for the pods", func() bool { return len(claimsAskedToRun(f, "web")) > 0 })
	if !cloud.Panicked() {
		t.Fatal("the provider never panicked: nothing was recovered")
	}
	if got := stack.RecoveredPanics(t, "provisioning") - before; got != 1 {
		t.Fatalf("stratos_controller_panics_total{controller=provisioning} rose by %v, want 1", got)
	}
}

package stack

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/harness"
)

// Disruption is a disruption controller of a test's own, against the harness's API
// server with its own cache and cluster state, whose passes the test makes one at a time
// on a clock it controls: decisions that depend on when a loop happens to run become
// deterministic. The fixture's operator runs beside it; tests keep that one idle (a long
// consolidateAfter on its real clock).
type Disruption struct {
	*disruption.Controller
	State *state.Cluster
}

// NewDisruption starts the controller's cache and waits until it has synced.
func NewDisruption(t testing.TB, env *harness.Env, cloud cloudprovider.API, clk clock.PassiveClock) *Disruption {
	t.Helper()
	mgr, err := newManager(t, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := indexes.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	cluster := state.New(clk)
	if err := cluster.Watch(ctx, mgr.GetCache()); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		t.Fatal("the disruption controller's cache did not sync")
	}
	c := &disruption.Controller{Client: mgr.GetClient(), Cloud: cloudprovider.New(cloud, cloudprovider.DefaultBatchOptions, nil), APIReader: mgr.GetAPIReader(),
		State: cluster, Recorder: mgr.GetEventRecorder("stratos-test-disruption"), Clock: clk}
	return &Disruption{Controller: c, State: cluster}
}

// WaitFor polls the controller's cluster state until cond holds, for up to a minute.
func (d *Disruption) WaitFor(t testing.TB, what string, cond func(state.Snapshot) bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return cond(d.State.Snapshot()), nil
	}); err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

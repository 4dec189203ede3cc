package warmpool_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// hungStopRuns numbers the runs of the test below, for their pools' names.
var hungStopRuns atomic.Int32

// An instance whose stop never ends (the fake cloud's StopsHang: its operating system
// does not shut down) has its stop forced once the stop timeout has passed, and stands
// by; the claim says so with a StopTimeout Event and the forced stop is counted.
//
// On main before the change, the claim stayed Stopping for ever, polling the instance
// every poll interval, and the test timed out waiting for Standby.
func TestAStopThatHangsIsForcedAfterTheStopTimeout(t *testing.T) {
	const timeout = 2 * time.Second
	f := newFixture(t, func(o *nodeclaim.Options) { o.StopTimeout = timeout })
	f.Cloud.SetFaults(fakecloud.Faults{StopsHang: 1})
	// The forced stops are counted per pool, in the process's registry: a pool of its
	// own per run, so that runs with -count or beside each other count apart.
	pool := fmt.Sprintf("hung-stop-%d", hungStopRuns.Add(1))
	f.Pool(pool, 1, nil)

	stopping := f.WaitForPhase(pool, 1, v1beta1.PhaseStopping)[0]
	claim := f.WaitForClaim(stopping.Name, v1beta1.PhaseStandby)
	f.Eventually("the claim whose stop was forced has a StopTimeout Event", func() bool { return f.EventSeen(claim.Name, nodeclaim.ReasonStopTimeout) })
	if stood, began := claim.Status.LastPhaseChangeTime.Time, stopping.Status.LastPhaseChangeTime.Time; stood.Sub(began) < timeout {
		t.Errorf("the claim stood by %s after its stop began, before the stop timeout of %s: the stop cannot have hung", stood.Sub(began), timeout)
	}
	if n := stack.Counter(t, "stratos_nodeclaims_forced_stops_total", map[string]string{"nodepool": pool}); n != 1 {
		t.Errorf("stratos_nodeclaims_forced_stops_total = %v, want 1", n)
	}
	f.assertStandby(claim)
	f.CheckInvariants()
}

// An instance that does not stop even when forced is broken: at twice the stop timeout
// its claim is removed and the instance terminated, and the pool warms a fresh node.
//
// On main before the change, the claim stayed Stopping for ever and the test timed out
// waiting for its removal.
func TestAStopThatHangsEvenForcedRemovesTheClaim(t *testing.T) {
	const timeout = time.Second
	f := newFixture(t, func(o *nodeclaim.Options) { o.StopTimeout = timeout })
	f.Cloud.SetFaults(fakecloud.Faults{StopsHang: 1, ForcedStopsHang: 1})
	pool := fmt.Sprintf("stuck-stop-%d", hungStopRuns.Add(1))
	f.Pool(pool, 1, nil)

	stopping := f.WaitForPhase(pool, 1, v1beta1.PhaseStopping)[0]
	f.Eventually("the claim is removed", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: stopping.Name}, &v1beta1.NodeClaim{}))
	})
	f.Eventually("the claim has a StopTimeout Event", func() bool {
		return slices.Contains(f.EventReasons(stopping.Name), nodeclaim.ReasonStopTimeout)
	})
	if i, _ := f.Instance(stopping.Status.InstanceID); i.State != cloudprovider.StateShuttingDown && i.State != cloudprovider.StateTerminated {
		t.Fatalf("the instance that would not stop is %s", i.State)
	}
	if n := stack.Counter(t, "stratos_nodeclaims_terminated_total", map[string]string{"nodepool": pool, "reason": nodeclaim.ReasonStopTimeout}); n != 1 {
		t.Errorf("stratos_nodeclaims_terminated_total{reason=StopTimeout} = %v, want 1", n)
	}
	f.Eventually("the pool warms a fresh node", func() bool {
		for _, c := range f.Claims(pool) {
			if c.Name != stopping.Name {
				return true
			}
		}
		return false
	})
}

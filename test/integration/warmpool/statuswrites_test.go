package warmpool_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/test/stack"
)

const poolStatusWrite = "update NodePool/status"

// A pool warming ten claims at once changes its counts many times a second; its status
// is written at most once a second all the same, each write beginning a second or more
// after the one before ended. Then, with nothing changing, passes over the pool write
// nothing.
func TestPoolStatusWrittenAtMostOncePerSecond(t *testing.T) {
	// Serial: the steady state is told by the process's count of the controller's passes.
	f := stack.NewSerialFixture(t, nil)
	f.Pool("paced", 10, nil)
	f.WaitForPhase("paced", 10, v1beta1.PhaseStandby)
	f.Eventually("the pool's status to count ten standby nodes", func() bool {
		pool := &v1beta1.NodePool{}
		return f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: "paced"}, pool) == nil && pool.Status.Nodes.Standby == 10
	})

	starts := f.Op.Writes.Starts("paced", poolStatusWrite)
	slices.SortFunc(starts, time.Time.Compare)
	// Ten claims each go through six phases: far more changes than writes.
	if len(starts) < 2 {
		t.Fatalf("the pool's status was written %d times while ten claims warmed up", len(starts))
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < nodepool.DefaultStatusWriteInterval {
			t.Fatalf("writes %d and %d of the pool's status began %s apart, less than %s; all began at %v", i, i+1, gap, nodepool.DefaultStatusWriteInterval, starts)
		}
	}
	t.Logf("%d status writes while ten claims warmed up", len(starts))

	// Steady state: a status computed within a second of the last write is held back and
	// written once the second is up, so the API server's count of ten standby nodes does
	// not yet mean that nothing is held. The state is steady after a round in which the
	// pool was poked a full interval after its last write ended and the passes that
	// followed wrote nothing: the second of them began after the interval, so it would
	// have written anything held.
	passes := func() float64 {
		return stack.Counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "nodepool", "result": "success"}) +
			stack.Counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "nodepool", "result": "requeue_after"})
	}
	pokes := 0
	poke := func() {
		before := passes()
		pokes++
		stack.Patch(f, &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "paced"}}, func(p *v1beta1.NodePool) {
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations["example.com/poke"] = fmt.Sprint(pokes)
		})
		f.Eventually("a pass over the poked pool", func() bool { return passes() > before })
	}
	rounds := 0
	f.Eventually("a round of passes that writes no status", func() bool {
		written := len(f.Op.Writes.Starts("paced", poolStatusWrite))
		if time.Since(f.Op.Writes.Last(poolStatusWrite)) < nodepool.DefaultStatusWriteInterval {
			return false
		}
		rounds++
		poke()
		poke()
		return len(f.Op.Writes.Starts("paced", poolStatusWrite)) == written
	})
	t.Logf("steady after %d rounds", rounds)

	// Each poke brings the pool a pass, and none of them writes.
	written := len(f.Op.Writes.Starts("paced", poolStatusWrite))
	for range 5 {
		poke()
	}
	if now := len(f.Op.Writes.Starts("paced", poolStatusWrite)); now != written {
		t.Fatalf("passes over a pool with nothing changed wrote its status %d times", now-written)
	}
}

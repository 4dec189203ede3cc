package interruption_test

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
)

// A standby instance terminated from outside Stratos is seen when its state-change
// notice comes, not at the claim's next resync: the lifecycle controller looks at the
// claim at once and removes it. Nothing else wakes a standby claim — its kubelet is
// stopped, so its Node does not change — and resync, polls and garbage collection are an
// hour apart here, so only the notice can bring the removal within the test's wait.
func TestAStateChangeToTerminatedRemovesTheClaimAtOnce(t *testing.T) {
	f := newFixture(t, nil)
	f.Pool("terminated-outside", 1, nil)
	claim := f.WaitForPhase("terminated-outside", 1, v1beta1.PhaseStandby)[0]

	slow := f.Opts
	slow.Notices = f.queue
	slow.NodeClaim.ResyncInterval, slow.NodeClaim.PollInterval, slow.NodeClaim.GCInterval = time.Hour, time.Hour, time.Hour
	reconciled := nodeClaimReconciles(t)
	f.RestartOperator(slow)
	// The new lifecycle controller looks at every claim once as it starts; the instance
	// is terminated after that look, which would otherwise see it.
	f.Eventually("the restarted lifecycle controller has looked at the claim", func() bool { return nodeClaimReconciles(t) > reconciled })

	recheck := map[string]string{"kind": "StateChange", "action": "recheck"}
	ignored := map[string]string{"kind": "StateChange", "action": "ignored"}
	rechecksBefore, ignoredBefore := counter(t, "messages_handled_total", recheck), counter(t, "messages_handled_total", ignored)
	// A state change that needs nothing (pending: the instance starts) is deleted and ignored.
	f.waitDeleted(f.queue.post(stateChange("sc-pending", claim.Status.InstanceID, "pending", now()))...)
	if n := counter(t, "messages_handled_total", ignored) - ignoredBefore; n != 1 {
		t.Errorf("handled{StateChange,ignored} rose by %v for a pending instance, want 1", n)
	}

	if err := f.Cloud.TerminateExternally(claim.Status.InstanceID); err != nil {
		t.Fatal(err)
	}
	posted := time.Now()
	f.waitDeleted(f.queue.post(stateChange("sc-terminated", claim.Status.InstanceID, "terminated", now()))...)
	f.Eventually("the claim is removed", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: claim.Name}, &v1beta1.NodeClaim{}))
	})
	t.Logf("claim removed %v after the notice was posted", time.Since(posted).Round(time.Millisecond))
	f.WaitForEvent(claim.Name, nodeclaim.ReasonInstanceGone)
	if n := counter(t, "messages_handled_total", recheck) - rechecksBefore; n != 1 {
		t.Errorf("handled{StateChange,recheck} rose by %v, want 1", n)
	}
}

// nodeClaimReconciles is how many reconciles the lifecycle controllers of this process
// have finished, whatever their result.
func nodeClaimReconciles(t *testing.T) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range families {
		if mf.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "nodeclaim" {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

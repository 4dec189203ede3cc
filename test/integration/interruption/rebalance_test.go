package interruption_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/interruption"
)

// A rebalance recommendation is recorded only on the claims of a pool that replaces
// such nodes, and cordons none; a pool that ignores it says so in an Event. A spot
// warning that follows takes the place of the recommendation, and a recommendation
// never takes the place of a warning.
func TestARebalanceRecommendationFollowsThePoolsPolicy(t *testing.T) {
	f := newFixture(t, nil)
	ignoring := f.runningClaim("rebalance-ignore", v1beta1.CapacityTypeSpot, nil)
	replacing := f.runningClaim("rebalance-replace", v1beta1.CapacityTypeSpot, func(p *v1beta1.NodePool) {
		p.Spec.Disruption.RebalanceRecommendation = v1beta1.RebalanceReplace
	})
	rebalance := func(action string) map[string]string {
		return map[string]string{"kind": "RebalanceRecommendation", "action": action}
	}
	ignoredBefore, markedBefore := counter(t, "messages_handled_total", rebalance("ignored")), counter(t, "messages_handled_total", rebalance("marked"))

	versions := f.ClaimVersions(replacing.Name)
	at := now()
	f.waitDeleted(f.queue.post(rebalanceRecommendation("rb-1", ignoring.Status.InstanceID, at), rebalanceRecommendation("rb-2", replacing.Status.InstanceID, at))...)

	if got := f.Claim(ignoring.Name); got.Status.Interruption != nil || interruptedCondition(got) != nil {
		t.Errorf("the claim of the pool that ignores rebalancing was marked: %+v", got.Status.Interruption)
	}
	f.Eventually("the ignoring pool's claim says the recommendation is ignored", func() bool {
		note, ok := f.EventNote(ignoring.Name, interruption.ReasonRebalanceRecommendation)
		return ok && strings.Contains(note, "ignored") && strings.Contains(note, "Ignore")
	})
	got := f.interrupted(versions)
	if got.Status.Interruption.Kind != v1beta1.InterruptionRebalance ||
		!got.Status.Interruption.NoticeTime.Equal(&metav1.Time{Time: at}) || got.Status.Interruption.Deadline != nil {
		t.Fatalf("status.interruption %+v, want a RebalanceRecommendation at %s without a deadline", got.Status.Interruption, at)
	}
	if cond := interruptedCondition(got); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "RebalanceRecommendation" {
		t.Fatalf("Interrupted condition %+v, want True, reason RebalanceRecommendation", cond)
	}
	for _, c := range []*v1beta1.NodeClaim{ignoring, replacing} {
		if node := f.node(c); node.Spec.Unschedulable {
			t.Errorf("a rebalance recommendation cordoned Node %s", node.Name)
		}
	}
	if n := counter(t, "messages_handled_total", rebalance("ignored")) - ignoredBefore; n != 1 {
		t.Errorf("handled{RebalanceRecommendation,ignored} rose by %v, want 1", n)
	}
	if n := counter(t, "messages_handled_total", rebalance("marked")) - markedBefore; n != 1 {
		t.Errorf("handled{RebalanceRecommendation,marked} rose by %v, want 1", n)
	}

	// A spot warning supersedes the recommendation; a later recommendation does not
	// supersede the warning. Both come in one receive, handled in order, so that the
	// second is handled before disruption, woken by the first, may replace the node.
	f.waitDeleted(f.queue.post(spotWarning("spot-after-rb", replacing.Status.InstanceID, now()), rebalanceRecommendation("rb-3", replacing.Status.InstanceID, now()))...)
	// Read from the claim's history: disruption, woken by the warning, may replace the
	// node and delete the claim before a read could see it.
	spot := func(c *v1beta1.NodeClaim) bool {
		return c.Status.Interruption != nil && c.Status.Interruption.Kind == v1beta1.InterruptionSpot
	}
	f.firstVersion(versions, "a version of the claim records the spot warning", spot)
	warned := false
	for _, v := range versions() {
		warned = warned || spot(&v)
		if cond := interruptedCondition(&v); warned && (!spot(&v) || cond == nil || cond.Reason != "SpotInterruption") {
			t.Fatalf("after a spot warning and a rebalance recommendation, version %s has status.interruption %+v and the condition %+v; want the spot warning's", v.ResourceVersion, v.Status.Interruption, interruptedCondition(&v))
		}
	}
}

package disruption_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/stack"
)

// A rebalance recommendation in a pool whose rebalanceRecommendation is Replace
// replaces the node as drift does, within the disruption budgets: a budget of 0 for
// Rebalance keeps it (two passes of a disruption controller of the test's own decide
// nothing), and once the budget allows one node, it is replaced before it drains, with
// Rebalance decisions. Without rebalance handling the node stays; with it outside the
// budgets, the first passes replace it.
func TestARebalanceRecommendationReplacesWithinTheBudget(t *testing.T) {
	f := stack.NewFixture(t, nil)
	pool := f.Pool("rebalance", 1, func(p *v1beta1.NodePool) {
		idleOnRealTime(p)
		p.Spec.Disruption.RebalanceRecommendation = v1beta1.RebalanceReplace
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionRebalance}}}
	})
	claim := runningNodes(f, "rebalance", 1)[0]
	loaded(f, "web-0", claim.Status.NodeName, 0.5, nil)
	standbyBeside(f, "rebalance", claim.Name)
	markInterrupted(f, claim.Name, v1beta1.InterruptionRebalance, 0)

	clk := testingclock.NewFakeClock(time.Now())
	d := stack.NewDisruption(t, f.Env, f.Cloud, clk)
	d.WaitFor(t, "the recommendation is seen", func(s state.Snapshot) bool {
		for _, c := range s.All {
			if c.Name == claim.Name {
				return meta.IsStatusConditionTrue(c.Status.Conditions, v1beta1.ConditionInterrupted)
			}
		}
		return false
	})
	for range 2 {
		if _, err := d.Pass(f.Ctx); err != nil {
			t.Fatal(err)
		}
		clk.Step(time.Minute)
	}
	stillRuns(f, claim.Name, "the budget of 0 for Rebalance")
	if f.EventSeen(claim.Name, disruption.ReasonRebalance) {
		t.Fatalf("the node was replaced despite a budget of 0 for Rebalance: %v", f.EventReasons(claim.Name))
	}
	for _, c := range f.Claims("rebalance") {
		if c.Name != claim.Name && c.Spec.DesiredState == v1beta1.DesiredRunning {
			t.Fatalf("claim %s was asked to run as a replacement despite a budget of 0", c.Name)
		}
	}

	stack.Patch(f, pool, func(p *v1beta1.NodePool) {
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "1", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionRebalance}}}
	})
	replacedBeforeDraining(f, claim, disruption.ReasonRebalance)
	wantDecisions(t, "rebalance", disruption.ReasonRebalance, map[string]float64{"replace": 1, "terminate": 1})
	f.CheckInvariants()
}

package disruption_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/stack"
)

// A user's pod that carries the stratos.sh/prepull label, in its own namespace and owned
// by no claim, is workload like any other: the cluster state counts it on its Node, and
// empty-node disruption, past consolidateAfter, leaves the node running. Pre-pull pods
// are told by their owner (a NodeClaim) and namespace; on main before the change the
// label alone made the pod vanish from the picture and its node look empty.
func TestAPodLabelledAsPrePullKeepsItsNodeRunning(t *testing.T) {
	f := stack.NewFixture(t, nil)
	// The fixture's own disruption, on the real clock, never gets to the node; the
	// test's, on a clock it moves, decides.
	f.Pool("impostor", 1, func(p *v1beta1.NodePool) {
		quickly(3)(p)
		p.Spec.Disruption.ConsolidateAfter = &v1beta1.Duration{Duration: time.Hour}
	})
	claim := runningNodes(f, "impostor", 1)[0]
	podOn(f, "impostor", claim.Status.NodeName, func(p *corev1.Pod) {
		p.Labels = map[string]string{v1beta1.LabelPrePull: claim.Name}
	})

	clk := testingclock.NewFakeClock(time.Now())
	d := stack.NewDisruption(t, f.Env, f.Cloud, clk)
	d.WaitFor(t, "the labelled pod counts on its Node", func(s state.Snapshot) bool {
		for _, node := range s.Nodes {
			if node.Node.Name == claim.Status.NodeName {
				return len(node.Pods) == 1
			}
		}
		return false
	})
	if _, err := d.Pass(f.Ctx); err != nil { // first sight of the node
		t.Fatal(err)
	}
	clk.Step(2 * time.Hour)
	if _, err := d.Pass(f.Ctx); err != nil { // past consolidateAfter, were it empty
		t.Fatal(err)
	}
	if got := f.Claim(claim.Name); got.Spec.DesiredState != v1beta1.DesiredRunning {
		t.Fatalf("the node with a labelled user pod was given back: desired %s", got.Spec.DesiredState)
	}
	f.CheckInvariants()
}

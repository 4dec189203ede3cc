// Package disruption_test runs disruption against a real kube-apiserver, the fake cloud
// and its kubelet simulator: empty nodes go back to standby or away, within budgets and
// never against stratos.sh/do-not-disrupt.
package disruption_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/test/stack"
)

// quickly gives back a pool's empty nodes after a second, with room for n standby nodes.
func quickly(ceiling int32) func(*v1beta1.NodePool) {
	return func(p *v1beta1.NodePool) {
		p.Spec.Standby.Max = ptr.To(ceiling)
		p.Spec.Disruption.ConsolidateAfter = &v1beta1.Duration{Duration: time.Second}
	}
}

// runningNodes starts n of a pool's standby claims and waits until they run.
func runningNodes(f *stack.Fixture, pool string, n int) []*v1beta1.NodeClaim {
	f.T.Helper()
	return start(f, f.WaitForPhase(pool, n, v1beta1.PhaseStandby)[:n])
}

// start asks standby claims to run and waits until they do.
func start(f *stack.Fixture, standby []v1beta1.NodeClaim) []*v1beta1.NodeClaim {
	f.T.Helper()
	for _, c := range standby {
		f.SetDesired(c.Name, v1beta1.DesiredRunning)
	}
	out := make([]*v1beta1.NodeClaim, 0, len(standby))
	for _, c := range standby {
		out = append(out, f.WaitForClaim(c.Name, v1beta1.PhaseRunning))
	}
	return out
}

// podOn runs a pod bound to a Node, as kube-scheduler would bind it; tune changes it
// before it is created.
func podOn(f *stack.Fixture, name, node string, tune func(*corev1.Pod)) *corev1.Pod {
	f.T.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
	if tune != nil {
		tune(pod)
	}
	f.Create(pod)
	return pod
}

func deletePod(f *stack.Fixture, pod *corev1.Pod) {
	f.T.Helper()
	if err := f.Env.Client.Delete(f.Ctx, pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
		f.T.Fatal(err)
	}
}

// A node whose last pod left goes back to standby after consolidateAfter: the same
// claim, instance and Node, drained, stopped and standing by, with an Event saying why.
func TestAnEmptyNodeGoesBackToStandby(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("empty-standby", 1, quickly(3))
	claim := runningNodes(f, "empty-standby", 1)[0]
	pod := podOn(f, "web-0", claim.Status.NodeName, nil)
	deletePod(f, pod)

	back := f.WaitForClaim(claim.Name, v1beta1.PhaseStandby)
	if back.Spec.DesiredState != v1beta1.DesiredStandby || back.Status.InstanceID != claim.Status.InstanceID || back.Status.NodeName != claim.Status.NodeName {
		t.Fatalf("claim came back as %+v / %+v", back.Spec, back.Status)
	}
	if !f.EventSeen(claim.Name, disruption.ReasonEmpty) {
		t.Fatalf("no %s Event on the claim; events: %v", disruption.ReasonEmpty, f.EventReasons(claim.Name))
	}
	wantDecisions(t, "empty-standby", disruption.ReasonEmpty, map[string]float64{"standby": 1, "terminate": 0})
	f.CheckInvariants()
}

// wantDecisions checks the pool's disruption decisions for reason, by outcome.
func wantDecisions(t *testing.T, pool, reason string, want map[string]float64) {
	t.Helper()
	for outcome, n := range want {
		labels := map[string]string{"nodepool": pool, "reason": reason, "outcome": outcome}
		if got := stack.Counter(t, "stratos_disruption_decisions_total", labels); got != n {
			t.Errorf("%v decisions %v, want %v", labels, got, n)
		}
	}
}

// When the warm pool is at its ceiling already (the pool refilled it when the node
// started), an empty node is terminated instead.
func TestAnEmptyNodeIsTerminatedWhenTheWarmPoolIsFull(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("empty-full", 1, quickly(1))
	claim := runningNodes(f, "empty-full", 1)[0]
	f.WaitForPhase("empty-full", 1, v1beta1.PhaseStandby) // the refill
	f.Eventually("the empty node is terminated", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(claim), &v1beta1.NodeClaim{}))
	})
	if !f.EventSeen(claim.Name, disruption.ReasonEmpty) {
		t.Fatalf("no %s Event for the claim", disruption.ReasonEmpty)
	}
	wantDecisions(t, "empty-full", disruption.ReasonEmpty, map[string]float64{"standby": 0, "terminate": 1})
	f.Eventually("the claim's instance is terminated", func() bool {
		inst, ok := f.Instance(claim.Status.InstanceID)
		return !ok || inst.State == cloudprovider.StateTerminated
	})
	f.CheckInvariants()
}

// stratos.sh/do-not-disrupt on a Node or on one of its pods keeps an empty node running,
// while an unmarked one next to it goes back to standby. The marks are set while the
// nodes stand by, so that they hold from the first moment the nodes run empty.
func TestDoNotDisruptKeepsEmptyNodesRunning(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 3, quickly(6))
	standby := f.WaitForPhase("web", 3, v1beta1.PhaseStandby)
	stack.Patch(f, f.Node(standby[0].Status.NodeName), func(n *corev1.Node) {
		n.Annotations = map[string]string{v1beta1.AnnotationDoNotDisrupt: "true"}
	})
	// A DaemonSet's pod leaves its node empty, but its annotation still counts.
	podOn(f, "agent", standby[1].Status.NodeName, func(p *corev1.Pod) {
		p.Annotations = map[string]string{v1beta1.AnnotationDoNotDisrupt: "true"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "agent-uid", Controller: ptr.To(true)}}
	})
	claims := start(f, standby)
	markedNode, markedPod, free := claims[0], claims[1], claims[2]

	f.WaitForClaim(free.Name, v1beta1.PhaseStandby)
	for _, c := range []*v1beta1.NodeClaim{markedNode, markedPod} {
		if got := f.Claim(c.Name); got.Spec.DesiredState != v1beta1.DesiredRunning || got.Status.Phase != v1beta1.PhaseRunning {
			t.Fatalf("claim %s was disrupted: %s / %s", c.Name, got.Spec.DesiredState, got.Status.Phase)
		}
	}
	f.CheckInvariants()
}

// A budget of 0 nodes keeps a pool's empty nodes running while another pool's go back.
func TestABudgetOfZeroBlocksDisruption(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("frozen", 1, func(p *v1beta1.NodePool) {
		quickly(3)(p)
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "0"}}
	})
	f.Pool("free", 1, quickly(3))
	frozen := runningNodes(f, "frozen", 1)[0]
	free := runningNodes(f, "free", 1)[0]

	f.WaitForClaim(free.Name, v1beta1.PhaseStandby)
	if got := f.Claim(frozen.Name); got.Status.Phase != v1beta1.PhaseRunning {
		t.Fatalf("the frozen pool's node went %s despite its budget", got.Status.Phase)
	}
	f.CheckInvariants()
}

// A budget of one node gives back three empty nodes one at a time: never two draining
// or stopping at once.
func TestABudgetOfOneGivesBackOneAtATime(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 3, func(p *v1beta1.NodePool) {
		quickly(6)(p)
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "1"}}
	})
	claims := runningNodes(f, "web", 3)
	most := 0
	f.Eventually("the three nodes are back in standby", func() bool {
		back, disrupting := 0, 0
		for _, c := range claims {
			got := f.Claim(c.Name)
			switch {
			case got.Status.Phase == v1beta1.PhaseStandby:
				back++
			case got.Status.Phase == v1beta1.PhaseDraining:
				disrupting++
			}
		}
		most = max(most, disrupting)
		return back == 3
	})
	if most > 1 {
		t.Fatalf("%d nodes drained at once under a budget of 1", most)
	}
	f.CheckInvariants()
}

// A node with pods is not empty, however long it runs; the empty one next to it goes back.
func TestABusyNodeKeepsRunning(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 2, quickly(4))
	standby := f.WaitForPhase("web", 2, v1beta1.PhaseStandby)
	for i := range 2 {
		podOn(f, fmt.Sprintf("web-%d", i), standby[0].Status.NodeName, nil)
	}
	claims := start(f, standby)
	busy, idle := claims[0], claims[1]
	f.WaitForClaim(idle.Name, v1beta1.PhaseStandby)
	if got := f.Claim(busy.Name); got.Status.Phase != v1beta1.PhaseRunning {
		t.Fatalf("a node with pods went %s", got.Status.Phase)
	}
	f.CheckInvariants()
}

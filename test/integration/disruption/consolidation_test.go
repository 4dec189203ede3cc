package disruption_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/test/stack"
)

// underutilized consolidates a pool's nodes a second after their pods last changed,
// all at once if need be, with room for ceiling standby nodes. Its nodes are on-demand,
// as its standby nodes are: where spot is allowed, consolidation also replaces a busy
// on-demand node by a cheaper spot one (backtospot_test.go), which the tests of giving
// nodes back are not about.
func underutilized(ceiling int32) func(*v1beta1.NodePool) {
	return func(p *v1beta1.NodePool) {
		quickly(ceiling)(p)
		capacityTypes(p, v1beta1.CapacityTypeOnDemand)
		p.Spec.Disruption.ConsolidationPolicy = v1beta1.ConsolidationWhenEmptyOrUnderutilized
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "100%"}}
	}
}

// loaded runs a pod of a ReplicaSet on a Node, as kube-scheduler would bind it, that
// requests share of the Node's allocatable CPU.
func loaded(f *stack.Fixture, name, node string, share float64, tune func(*corev1.Pod)) *corev1.Pod {
	f.T.Helper()
	cpu := f.Node(node).Status.Allocatable[corev1.ResourceCPU]
	request := resource.NewMilliQuantity(int64(float64(cpu.MilliValue())*share), resource.DecimalSI)
	return podOn(f, name, node, func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": name}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "web-uid", Controller: ptr.To(true)}}
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: *request}
		if tune != nil {
			tune(p)
		}
	})
}

// running reports whether a claim runs, asked to.
func running(f *stack.Fixture, name string) bool {
	c := f.Claim(name)
	return c.Spec.DesiredState == v1beta1.DesiredRunning && c.Status.Phase == v1beta1.PhaseRunning
}

// Three nodes at a quarter each: the pods of two fit on the third, and the two go back
// to standby in one decision, while the third keeps running.
func TestUnderutilizedNodesAreConsolidatedTogether(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 3, underutilized(6))
	standby := f.WaitForPhase("web", 3, v1beta1.PhaseStandby)
	for i, c := range standby {
		loaded(f, fmt.Sprintf("web-%d", i), c.Status.NodeName, 0.25, nil)
	}
	claims := start(f, standby)

	var given []string
	f.Eventually("two of the three nodes are back in standby", func() bool {
		given = nil
		for _, c := range claims {
			if f.Claim(c.Name).Status.Phase == v1beta1.PhaseStandby {
				given = append(given, c.Name)
			}
		}
		return len(given) == 2
	})
	for _, name := range given {
		note, ok := f.EventNote(name, disruption.ReasonUnderutilized)
		if !ok || !strings.Contains(note, "consolidated with 1 other node") {
			t.Fatalf("claim %s: %s Event %q, want one naming the node it went with", name, disruption.ReasonUnderutilized, note)
		}
	}
	for _, c := range claims {
		if c.Name != given[0] && c.Name != given[1] && !running(f, c.Name) {
			t.Fatalf("the third node %s must keep running", c.Name)
		}
	}
	f.CheckInvariants()
}

// Under a steady load no node is started or stopped: three nodes at 60% each keep
// running through consolidation passes, while two idler nodes next to them go, which
// shows that the passes ran. The pod of the node consolidated comes back on a busy node,
// as its ReplicaSet and kube-scheduler would bring it, and that changes nothing either.
func TestASteadyLoadCausesNoChurn(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 4, underutilized(8))
	standby := f.WaitForPhase("web", 4, v1beta1.PhaseStandby)
	for i, c := range standby[:3] {
		loaded(f, fmt.Sprintf("steady-%d", i), c.Status.NodeName, 0.6, nil)
	}
	small := loaded(f, "small", standby[3].Status.NodeName, 0.1, nil)
	claims := start(f, standby)
	busy, idler := claims[:3], claims[3]

	f.WaitForClaim(idler.Name, v1beta1.PhaseStandby)
	f.Eventually("the small pod is evicted", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(small), &corev1.Pod{}))
	})
	loaded(f, "small-again", busy[0].Status.NodeName, 0.1, nil)

	// A node started empty goes after consolidateAfter: passes ran past the busy nodes'.
	var control v1beta1.NodeClaim
	f.Eventually("a standby node to start", func() bool {
		for _, c := range f.Claims("web") {
			if c.Status.Phase == v1beta1.PhaseStandby && c.Name != idler.Name {
				control = c
				return true
			}
		}
		return false
	})
	start(f, []v1beta1.NodeClaim{control})
	f.WaitForClaim(control.Name, v1beta1.PhaseStandby)

	for _, c := range busy {
		if !running(f, c.Name) || f.EventSeen(c.Name, disruption.ReasonUnderutilized) {
			note, _ := f.EventNote(c.Name, disruption.ReasonUnderutilized)
			t.Fatalf("busy node %s was disrupted under a steady load: %v: %s", c.Name, f.EventReasons(c.Name), note)
		}
	}
	for _, c := range f.Claims("web") {
		if c.Spec.DesiredState == v1beta1.DesiredRunning && c.Name != busy[0].Name && c.Name != busy[1].Name && c.Name != busy[2].Name {
			t.Fatalf("claim %s was started under a steady load", c.Name)
		}
	}
	f.CheckInvariants()
}

package disruption

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/pdbs"
	"github.com/stratos-sh/stratos/internal/state"
)

// guardedPod is a Ready pod of app bound to node.
func guardedPod(name, app, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": app},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: app, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		}},
	}
}

// allowing is a budget over app that lets allowed of its healthy pods go.
func allowing(app string, allowed, healthy int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: healthy, DesiredHealthy: healthy - allowed},
	}
}

func onNode(name string, pods ...*corev1.Pod) candidate {
	return candidate{claim: &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim-" + name}},
		node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, pods: pods}
}

// The pods of nodes going away and of nodes being replaced take their budget's
// disruptions before a new decision does; a node's own pods are not counted twice.
func TestEvictionsComingCountBeforeADecision(t *testing.T) {
	a, b, c := guardedPod("web-a", "web", "n1"), guardedPod("web-b", "web", "n2"), guardedPod("web-c", "web", "n3")
	budget := allowing("web", 1, 3)
	c1 := &Controller{replacing: map[string]*replacement{}}
	p := &pass{snap: state.Snapshot{PDBs: []*policyv1.PodDisruptionBudget{budget}}}
	if blocked := c1.evictionsBlocked(p, onNode("n2", b)); blocked != nil {
		t.Fatalf("nothing else goes: %s", blocked)
	}

	p.snap.Leaving = []*corev1.Pod{a}
	if blocked := c1.evictionsBlocked(p, onNode("n2", b)); blocked == nil {
		t.Fatal("a draining node's pod needs the budget's one disruption")
	}
	if blocked := c1.evictionsBlocked(p, onNode("n1", a)); blocked != nil {
		t.Fatalf("a node's own pod counted against itself: %s", blocked)
	}

	p = &pass{snap: state.Snapshot{PDBs: []*policyv1.PodDisruptionBudget{budget},
		Nodes: []state.NodeState{{Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n3"}}, Pods: []*corev1.Pod{c}}}}}
	c1.replacing["claim-n3"] = &replacement{node: "n3"}
	if blocked := c1.evictionsBlocked(p, onNode("n2", b)); blocked == nil {
		t.Fatal("the pod of a node being replaced needs the budget's one disruption")
	}
	c1.replacing["claim-n3"].done = true
	if blocked := c1.evictionsBlocked(p, onNode("n2", b)); blocked != nil {
		t.Fatalf("a replacement done no longer counts: %s", blocked)
	}
}

// The candidates of one decision count together.
func TestTheNodesOfOneDecisionCountTogether(t *testing.T) {
	budget := allowing("web", 1, 3)
	c := &Controller{replacing: map[string]*replacement{}}
	p := &pass{snap: state.Snapshot{PDBs: []*policyv1.PodDisruptionBudget{budget}}}
	n1, n2 := onNode("n1", guardedPod("web-a", "web", "n1")), onNode("n2", guardedPod("web-b", "web", "n2"))
	chosen := largest([]candidate{n1, n2}, func(set []candidate) bool { return c.evictionsBlocked(p, set...) == nil })
	if len(chosen) != 1 {
		t.Fatalf("%d nodes chosen together under a budget of one disruption, want 1", len(chosen))
	}
}

// A drain is blocked only while no pod left can go: a pod leaving or one its budget lets
// go is progress.
func TestADrainIsBlockedWhenNoPodLeftCanGo(t *testing.T) {
	set := pdbs.NewSet([]*policyv1.PodDisruptionBudget{allowing("db", 0, 1), allowing("web", 1, 2)})
	db, web := guardedPod("db-0", "db", "n1"), guardedPod("web-0", "web", "n1")
	leaving := guardedPod("db-1", "db", "n1")
	leaving.DeletionTimestamp = ptr.To(metav1.Now())
	daemon := guardedPod("agent", "agent", "n1")
	daemon.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: ptr.To(true)}}

	if blocked := drainBlocked(set, []*corev1.Pod{db, daemon}); blocked == nil || blocked.Pod != db {
		t.Fatalf("only a guarded pod left: want it blocked by db, got %v", blocked)
	}
	if blocked := drainBlocked(set, []*corev1.Pod{db, web}); blocked != nil {
		t.Fatalf("the web pod may go: the drain makes progress, got %s", blocked)
	}
	if blocked := drainBlocked(set, []*corev1.Pod{db, leaving}); blocked != nil {
		t.Fatalf("a pod is leaving: the drain makes progress, got %s", blocked)
	}
	if blocked := drainBlocked(set, []*corev1.Pod{daemon}); blocked != nil {
		t.Fatalf("no workload left: nothing blocks, got %s", blocked)
	}
}

// A claim asked to be terminated counts as being disrupted while it runs or drains, and
// no longer as one the pool keeps.
func TestACensusCountsClaimsAskedToBeTerminatedAsGoing(t *testing.T) {
	claim := func(desired v1beta1.DesiredState, phase v1beta1.NodeClaimPhase) *v1beta1.NodeClaim {
		return &v1beta1.NodeClaim{Spec: v1beta1.NodeClaimSpec{DesiredState: desired}, Status: v1beta1.NodeClaimStatus{Phase: phase, NodeName: "n"}}
	}
	n := census(&v1beta1.NodePool{}, []*v1beta1.NodeClaim{
		claim(v1beta1.DesiredRunning, v1beta1.PhaseRunning),
		claim(v1beta1.DesiredTerminated, v1beta1.PhaseRunning),
		claim(v1beta1.DesiredTerminated, v1beta1.PhaseDraining),
		claim(v1beta1.DesiredStandby, v1beta1.PhaseStandby),
	})
	if n.total != 3 || n.disrupting != 2 || n.live != 2 || n.running != 1 || n.standby != 1 {
		t.Fatalf("census %+v: want 3 in the budget's total, 2 disrupting, 2 live, 1 running, 1 standby", n)
	}
}

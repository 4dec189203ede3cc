package state

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func unschedulable(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		}}},
	}
}

func TestProvisionable(t *testing.T) {
	daemon := unschedulable("ds")
	daemon.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: ptr.To(true)}}
	mirror := unschedulable("mirror")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	optedOut := unschedulable("opted-out")
	optedOut.Annotations = map[string]string{v1beta1.AnnotationDoNotProvision: "true"}
	bound := unschedulable("bound")
	bound.Spec.NodeName = "n"
	terminating := unschedulable("terminating")
	terminating.DeletionTimestamp = &metav1.Time{Time: epoch}
	preempting := unschedulable("preempting")
	preempting.Status.NominatedNodeName = "n"
	fresh := unschedulable("fresh")
	fresh.Status.Conditions = nil
	cases := map[*corev1.Pod]bool{
		unschedulable("web"): true, daemon: false, mirror: false, optedOut: false, bound: false, terminating: false, preempting: false, fresh: false,
	}
	for pod, want := range cases {
		if got := Provisionable(pod); got != want {
			t.Errorf("Provisionable(%s) = %v, want %v", pod.Name, got, want)
		}
	}
}

func TestPodsMoveFromPendingToTheirNode(t *testing.T) {
	c := New(testingclock.NewFakeClock(epoch), prePullNamespace)
	triggered := 0
	c.OnPending(func() { triggered++ })
	pod := unschedulable("web")
	c.updatePod(pod, false)
	if s := c.Snapshot(); len(s.Pending) != 1 || triggered != 1 {
		t.Fatalf("pending %d, triggered %d", len(s.Pending), triggered)
	}
	bound := pod.DeepCopy()
	bound.Spec.NodeName = "n1"
	c.updateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, false)
	c.updatePod(bound, false)
	s := c.Snapshot()
	if len(s.Pending) != 0 || len(s.Nodes) != 1 || len(s.Nodes[0].Pods) != 1 {
		t.Fatalf("snapshot %+v", s)
	}
	c.updatePod(bound, true)
	if s := c.Snapshot(); len(s.Nodes[0].Pods) != 0 {
		t.Fatalf("a deleted pod stayed on its node")
	}
}

// prePullNamespace is where the tests' pre-pull pods are made.
const prePullNamespace = "stratos"

// Stratos's pre-pull pod (controlled by its claim, in the pre-pull namespace) takes no
// room on its Node; a pod that only carries its label, in another namespace or with no
// claim for owner, counts as any pod does.
func TestAPrePullPodTakesNoRoomOnItsNode(t *testing.T) {
	c := New(testingclock.NewFakeClock(epoch), prePullNamespace)
	c.updateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, false)
	owner := metav1.OwnerReference{APIVersion: v1beta1.GroupVersion.String(), Kind: "NodeClaim", Name: "c", UID: "c", Controller: ptr.To(true)}
	labelled := func(uid types.UID, namespace string, owners ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "prepull-c", Namespace: namespace, UID: uid, OwnerReferences: owners,
			Labels: map[string]string{v1beta1.LabelPrePull: "c"}}, Spec: corev1.PodSpec{NodeName: "n1"}}
	}
	c.updatePod(labelled("p", prePullNamespace, owner), false)
	if s := c.Snapshot(); len(s.Nodes) != 1 || len(s.Nodes[0].Pods) != 0 {
		t.Fatalf("the pre-pull pod counts on its Node: %+v", s.Nodes)
	}
	c.updatePod(labelled("u1", "shop", owner), false)
	c.updatePod(labelled("u2", prePullNamespace), false)
	if s := c.Snapshot(); len(s.Nodes[0].Pods) != 2 {
		t.Fatalf("pods that only carry the pre-pull label: %d counted on their Node, want 2", len(s.Nodes[0].Pods))
	}
}

func TestNominationsHoldUntilBoundExpiredOrClaimGone(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	c := New(clk, prePullNamespace)
	pod := unschedulable("web")
	c.updatePod(pod, false)
	claim := runningClaim("c1", v1beta1.PhaseLaunching)
	c.ObserveWrite(claim, "")
	c.Nominate("c1", []*corev1.Pod{pod}, time.Minute)

	s := c.Snapshot()
	if len(s.Pending) != 0 || len(s.Claims) != 1 || len(s.Claims[0].Nominated) != 1 || !s.NextLapse.Equal(epoch.Add(WriteConfirmTimeout)) {
		t.Fatalf("a nominated pod must wait on its claim: %+v", s)
	}

	clk.Step(2 * time.Minute)
	if s := c.Snapshot(); len(s.Pending) != 1 {
		t.Fatalf("an expired nomination must free the pod: %+v", s)
	}
	c.Nominate("c1", []*corev1.Pod{pod}, time.Minute)
	gone := claim.DeepCopy()
	c.updateClaim(gone, true)
	if s := c.Snapshot(); len(s.Pending) != 1 {
		t.Fatalf("a nomination to a deleted claim must free the pod: %+v", s)
	}
}

func TestANominationToARunningClaimLapsesAfterTheBindGrace(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	c := New(clk, prePullNamespace)
	pod := unschedulable("web")
	c.updatePod(pod, false)
	claim := runningClaim("c1", v1beta1.PhaseRunning)
	claim.Status.NodeName = "n1"
	c.updateClaim(claim, false)
	c.updateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, false)
	c.Nominate("c1", []*corev1.Pod{pod}, time.Hour)

	// Running, the claim's Node is one like the others, and the pod counts on it.
	s := c.Snapshot()
	if len(s.Claims) != 0 || len(s.Nodes) != 1 || len(s.Nodes[0].Pods) != 1 || len(s.Pending) != 0 {
		t.Fatalf("a nominated pod of a running claim counts on its Node: %+v", s)
	}
	if want := epoch.Add(BindGrace); !s.NextLapse.Equal(want) {
		t.Fatalf("NextLapse = %v, want %v", s.NextLapse, want)
	}
	// Kube-scheduler filled the Node with other pods and left this one out.
	clk.SetTime(epoch.Add(BindGrace))
	s = c.Snapshot()
	if len(s.Pending) != 1 || len(s.Nodes[0].Pods) != 0 || !s.NextLapse.IsZero() {
		t.Fatalf("a pod left unbound past the grace must wait for capacity again: %+v", s)
	}
}

func TestANominationEndsWhenItsClaimGoesBackToStandby(t *testing.T) {
	c := New(testingclock.NewFakeClock(epoch), prePullNamespace)
	pod := unschedulable("web")
	c.updatePod(pod, false)
	claim := runningClaim("c1", v1beta1.PhaseStopping)
	c.updateClaim(claim, false)
	c.Nominate("c1", []*corev1.Pod{pod}, time.Hour)
	if s := c.Snapshot(); len(s.Pending) != 0 {
		t.Fatalf("a claim asked to run holds its pods: %+v", s)
	}
	standby := claim.DeepCopy()
	standby.Spec.DesiredState = v1beta1.DesiredStandby
	c.updateClaim(standby, false)
	if s := c.Snapshot(); len(s.Pending) != 1 {
		t.Fatalf("nothing starts a claim asked to stand by, so its pods wait for capacity again: %+v", s)
	}
}

// withNodeAndPod shows the claim, its Node n1 and a pod "web" bound to it.
func withNodeAndPod(c *Cluster, claim *v1beta1.NodeClaim) {
	claim.Status.NodeName = "n1"
	c.updateClaim(claim, false)
	c.updateNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, false)
	pod := unschedulable("web")
	pod.Spec.NodeName = "n1"
	c.updatePod(pod, false)
}

// runningClaim is a claim asked to run, in phase, that changed phase at epoch.
func runningClaim(name string, phase v1beta1.NodeClaimPhase) *v1beta1.NodeClaim {
	return &v1beta1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec:       v1beta1.NodeClaimSpec{DesiredState: v1beta1.DesiredRunning},
		Status:     v1beta1.NodeClaimStatus{Phase: phase, LastPhaseChangeTime: &metav1.Time{Time: epoch}},
	}
}

func TestObserveWriteDoesNotUndoANewerInformerCopy(t *testing.T) {
	c := New(testingclock.NewFakeClock(epoch), prePullNamespace)
	informer := &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c1", ResourceVersion: "7"}}
	c.updateClaim(informer, false)
	mine := informer.DeepCopy()
	mine.ResourceVersion = "6"
	c.ObserveWrite(mine, "5") // written on top of 5: the informer is past it
	if s := c.Snapshot(); s.All[0].ResourceVersion != "7" {
		t.Fatal("an older write replaced the informer's newer copy")
	}
	mine = mine.DeepCopy()
	mine.ResourceVersion = "8"
	c.ObserveWrite(mine, "7")
	if s := c.Snapshot(); s.All[0].ResourceVersion != "8" {
		t.Fatal("a write on top of the cached copy must show at once")
	}
}

// A claim this process created that the informer never shows (created and deleted
// while the watch was down) counts for WriteConfirmTimeout, then no longer: its pods
// wait for capacity again, and provisioning is told when.
func TestAWriteTheInformerNeverShowsIsForgotten(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	c := New(clk, prePullNamespace)
	pod := unschedulable("web")
	c.updatePod(pod, false)
	c.ObserveWrite(runningClaim("phantom", v1beta1.PhaseLaunching), "")
	c.Nominate("phantom", []*corev1.Pod{pod}, time.Hour)

	s := c.Snapshot()
	if len(s.Claims) != 1 || len(s.Pending) != 0 || len(s.All) != 1 {
		t.Fatalf("a claim just written counts at once: %+v", s)
	}
	if want := epoch.Add(WriteConfirmTimeout); !s.NextLapse.Equal(want) {
		t.Fatalf("NextLapse = %v, want the write's bound %v", s.NextLapse, want)
	}
	version := s.Version
	clk.SetTime(epoch.Add(WriteConfirmTimeout))
	s = c.Snapshot()
	if len(s.Claims) != 0 || len(s.All) != 0 || len(s.Pending) != 1 {
		t.Fatalf("an unconfirmed write must be forgotten after its bound: %+v", s)
	}
	if s.Version == version {
		t.Error("forgetting a claim must change the version, so that waiting pods are looked at again")
	}
}

// A write the informer shows is the informer's from then on: the bound does not apply.
func TestAConfirmedWriteOutlivesTheBound(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	c := New(clk, prePullNamespace)
	claim := runningClaim("c1", v1beta1.PhaseLaunching)
	c.ObserveWrite(claim, "")
	c.updateClaim(claim, false)
	clk.Step(2 * WriteConfirmTimeout)
	if s := c.Snapshot(); len(s.All) != 1 {
		t.Fatalf("a claim the informer shows must stay: %+v", s)
	}
}

// A patch the informer has not shown yet wins over the informer's older copy, and a
// deletion this process made counts as a deletion at once.
func TestWritesOnTopOfTheInformerShowAtOnce(t *testing.T) {
	c := New(testingclock.NewFakeClock(epoch), prePullNamespace)
	claim := runningClaim("c1", v1beta1.PhaseRunning)
	withNodeAndPod(c, claim)
	if s := c.Snapshot(); len(s.Nodes) != 1 || len(s.Leaving) != 0 {
		t.Fatalf("a running claim's Node serves pods: %+v", s)
	}

	given := claim.DeepCopy()
	given.Spec.DesiredState = v1beta1.DesiredStandby
	given.ResourceVersion = "2"
	c.ObserveWrite(given, "1")
	s := c.Snapshot()
	if len(s.Nodes) != 0 || len(s.Leaving) != 1 || s.Leaving[0].Name != "web" {
		t.Fatalf("a Node given back is no room, and its pods are leaving: %+v", s)
	}
	// The informer's copy of the write confirms it; an older copy does not undo it.
	c.updateClaim(claim, false)
	if s := c.Snapshot(); len(s.Nodes) != 0 {
		t.Fatal("an informer event older than the write undid it")
	}

	c.ObserveDeletion(given)
	s = c.Snapshot()
	if len(s.Nodes) != 0 || len(s.Claims) != 0 || len(s.All) != 1 || s.All[0].DeletionTimestamp.IsZero() || len(s.Leaving) != 1 {
		t.Fatalf("a claim deleted by this process is being deleted at once: %+v", s)
	}
}

// Provisioning is told when a claim that pods are nominated to is asked back to standby
// or deleted, so that they are planned again in the next batch.
func TestProvisioningHearsOfNominationsThatLapse(t *testing.T) {
	c := New(testingclock.NewFakeClock(epoch), prePullNamespace)
	pod := unschedulable("web")
	c.updatePod(pod, false)
	claim := runningClaim("c1", v1beta1.PhaseStandby)
	c.updateClaim(claim, false)
	c.Nominate("c1", []*corev1.Pod{pod}, time.Hour)
	told := 0
	c.OnPending(func() { told++ })

	c.updateClaim(claim, false)
	if told != 0 {
		t.Fatal("an unchanged claim must not wake provisioning")
	}
	back := claim.DeepCopy()
	back.Spec.DesiredState = v1beta1.DesiredStandby
	c.updateClaim(back, false)
	if told != 1 {
		t.Fatalf("provisioning told %d times, want once when the claim went back to standby", told)
	}
	c.updateClaim(back, true)
	if told != 2 {
		t.Fatalf("provisioning told %d times, want again when the claim was deleted", told)
	}
}

// A claim asked to be terminated drains its Node like one given back: the Node is no
// room, and its pods are leaving.
func TestANodeAskedToBeTerminatedIsLeaving(t *testing.T) {
	c := New(testingclock.NewFakeClock(epoch), prePullNamespace)
	claim := runningClaim("c1", v1beta1.PhaseRunning)
	claim.Spec.DesiredState = v1beta1.DesiredTerminated
	withNodeAndPod(c, claim)
	if s := c.Snapshot(); len(s.Nodes) != 0 || len(s.Leaving) != 1 {
		t.Fatalf("a Node asked to be terminated is no room, and its pods leave: %+v", s)
	}
}

// The picture keeps the PodDisruptionBudgets as the informer shows them.
func TestThePictureKeepsPodDisruptionBudgets(t *testing.T) {
	c := New(testingclock.NewFakeClock(epoch), prePullNamespace)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
	c.updatePDB(pdb, false)
	changed := pdb.DeepCopy()
	changed.Status.DisruptionsAllowed = 1
	c.updatePDB(changed, false)
	if s := c.Snapshot(); len(s.PDBs) != 1 || s.PDBs[0].Status.DisruptionsAllowed != 1 {
		t.Fatalf("want the budget as last seen: %+v", s.PDBs)
	}
	c.updatePDB(changed, true)
	if s := c.Snapshot(); len(s.PDBs) != 0 {
		t.Fatalf("a deleted budget stayed: %+v", s.PDBs)
	}
}

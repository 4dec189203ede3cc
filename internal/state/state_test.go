package state

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1alpha1"
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
	optedOut.Annotations = map[string]string{v1alpha1.AnnotationDoNotProvision: "true"}
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
	c := New(testingclock.NewFakeClock(epoch))
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

func TestNominationsHoldUntilBoundExpiredOrClaimGone(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	c := New(clk)
	pod := unschedulable("web")
	c.updatePod(pod, false)
	claim := runningClaim("c1", v1alpha1.PhaseLaunching)
	c.ObserveWrite(claim, "")
	c.Nominate("c1", []*corev1.Pod{pod}, time.Minute)

	s := c.Snapshot()
	if len(s.Pending) != 0 || len(s.Claims) != 1 || len(s.Claims[0].Nominated) != 1 || !s.NextLapse.IsZero() {
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
	c := New(clk)
	pod := unschedulable("web")
	c.updatePod(pod, false)
	claim := runningClaim("c1", v1alpha1.PhaseRunning)
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
	c := New(testingclock.NewFakeClock(epoch))
	pod := unschedulable("web")
	c.updatePod(pod, false)
	claim := runningClaim("c1", v1alpha1.PhaseStopping)
	c.updateClaim(claim, false)
	c.Nominate("c1", []*corev1.Pod{pod}, time.Hour)
	if s := c.Snapshot(); len(s.Pending) != 0 {
		t.Fatalf("a claim asked to run holds its pods: %+v", s)
	}
	standby := claim.DeepCopy()
	standby.Spec.DesiredState = v1alpha1.DesiredStandby
	c.updateClaim(standby, false)
	if s := c.Snapshot(); len(s.Pending) != 1 {
		t.Fatalf("nothing starts a claim asked to stand by, so its pods wait for capacity again: %+v", s)
	}
}

// runningClaim is a claim asked to run, in phase, that changed phase at epoch.
func runningClaim(name string, phase v1alpha1.NodeClaimPhase) *v1alpha1.NodeClaim {
	return &v1alpha1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec:       v1alpha1.NodeClaimSpec{DesiredState: v1alpha1.DesiredRunning},
		Status:     v1alpha1.NodeClaimStatus{Phase: phase, LastPhaseChangeTime: &metav1.Time{Time: epoch}},
	}
}

func TestObserveWriteDoesNotUndoANewerInformerCopy(t *testing.T) {
	c := New(testingclock.NewFakeClock(epoch))
	informer := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c1", ResourceVersion: "7"}}
	c.updateClaim(informer, false)
	mine := informer.DeepCopy()
	mine.ResourceVersion = "6"
	c.ObserveWrite(mine, "5") // written on top of 5: the informer is past it
	if c.claims["c1"].ResourceVersion != "7" {
		t.Fatal("an older write replaced the informer's newer copy")
	}
	mine.ResourceVersion = "8"
	c.ObserveWrite(mine, "7")
	if c.claims["c1"].ResourceVersion != "8" {
		t.Fatal("a write on top of the cached copy must show at once")
	}
}

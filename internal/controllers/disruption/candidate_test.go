package disruption

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func nodeWith(pods ...corev1.Pod) candidate {
	c := candidate{claim: &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}, node: &corev1.Node{}}
	for i := range pods {
		c.pods = append(c.pods, &pods[i])
	}
	return c
}

var daemonPod = corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "ds", OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: ptr.To(true)}}}}

func workload(uid string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: k8stypes.UID("uid-" + uid), Name: uid, Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", Controller: ptr.To(true)}}}}
}

func TestSettlingRestartsWhenTheWorkloadsChange(t *testing.T) {
	s := settling{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if since := s.observe(nodeWith(workload("a")), t0); !since.Equal(t0) {
		t.Fatalf("first sight: since %v", since)
	}
	if since := s.observe(nodeWith(workload("a"), daemonPod), t0.Add(time.Minute)); !since.Equal(t0) {
		t.Fatalf("a DaemonSet pod must not restart the wait, got %v", since)
	}
	if since := s.observe(nodeWith(workload("a"), workload("b")), t0.Add(2*time.Minute)); !since.Equal(t0.Add(2 * time.Minute)) {
		t.Fatalf("a new pod must restart the wait, got %v", since)
	}
	if since := s.observe(nodeWith(daemonPod), t0.Add(3*time.Minute)); !since.Equal(t0.Add(3 * time.Minute)) {
		t.Fatalf("the last pod leaving must restart the wait, got %v", since)
	}
	if since := s.observe(nodeWith(), t0.Add(4*time.Minute)); !since.Equal(t0.Add(3 * time.Minute)) {
		t.Fatalf("emptiness must keep its start, got %v", since)
	}
	s.forgetAllBut(map[string]bool{})
	if len(s) != 0 {
		t.Fatal("claims gone must be forgotten")
	}
}

func TestUnmovableNamesAPodWithoutController(t *testing.T) {
	bare := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "default"}}
	if why := nodeWith(workload("a"), daemonPod).unmovable(); why != "" {
		t.Fatalf("owned pods are movable, got %q", why)
	}
	if why := nodeWith(workload("a"), bare).unmovable(); why == "" {
		t.Fatal("a pod without a controller must keep its node")
	}
}
func TestDoNotDisruptOnTheNodeOrARunningPod(t *testing.T) {
	marked := map[string]string{v1beta1.AnnotationDoNotDisrupt: "true"}
	finished := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: marked}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	cases := map[string]struct {
		cand    candidate
		blocked bool
	}{
		"nothing marked": {nodeWith(corev1.Pod{}), false},
		"the Node":       {candidate{node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: marked}}}, true},
		"a pod":          {nodeWith(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: marked}}), true},
		"a finished pod": {nodeWith(finished), false},
		"marked false":   {nodeWith(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1beta1.AnnotationDoNotDisrupt: "false"}}}), false},
	}
	for name, c := range cases {
		if got := c.cand.blocked() != ""; got != c.blocked {
			t.Errorf("%s: blocked = %v, want %v", name, got, c.blocked)
		}
	}
}

func TestCensusCountsWhatBudgetsAreOf(t *testing.T) {
	deleted := metav1.Now()
	claim := func(desired v1beta1.DesiredState, phase v1beta1.NodeClaimPhase, deleting bool) *v1beta1.NodeClaim {
		c := &v1beta1.NodeClaim{Spec: v1beta1.NodeClaimSpec{DesiredState: desired}, Status: v1beta1.NodeClaimStatus{Phase: phase, NodeName: "n"}}
		if deleting {
			c.DeletionTimestamp = &deleted
		}
		return c
	}
	n := census(&v1beta1.NodePool{}, []*v1beta1.NodeClaim{
		claim(v1beta1.DesiredRunning, v1beta1.PhaseRunning, false),
		claim(v1beta1.DesiredRunning, v1beta1.PhaseRunning, false),
		claim(v1beta1.DesiredStandby, v1beta1.PhaseRunning, false),    // just asked back, not draining yet
		claim(v1beta1.DesiredStandby, v1beta1.PhaseDraining, false),   // giving back
		claim(v1beta1.DesiredRunning, v1beta1.PhaseTerminating, true), // a running node going away
		claim(v1beta1.DesiredStandby, v1beta1.PhaseStandby, false),    // warm
		claim(v1beta1.DesiredStandby, v1beta1.PhaseTerminating, true), // an excess standby going away
		claim(v1beta1.DesiredStandby, v1beta1.PhaseWarmingUp, false),  // warming
	})
	if n.total != 5 || n.disrupting != 3 || n.standby != 4 {
		t.Fatalf("total %d, disrupting %d, standby %d; want 5, 3, 4", n.total, n.disrupting, n.standby)
	}
	if n.live != 6 || n.running != 2 {
		t.Fatalf("live %d, running %d; want 6, 2", n.live, n.running)
	}
}

// A pod that carries the pre-pull label is workload like any other: Stratos's own
// pre-pull pods never reach a candidate (the cluster state leaves them out by owner and
// namespace), and a label any pod can carry must not make a node look empty.
func TestAPodLabelledAsPrePullKeepsTheNodeBusy(t *testing.T) {
	labelled := corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "p", Name: "impostor", Namespace: "shop", Labels: map[string]string{v1beta1.LabelPrePull: "c1"}}}
	if nodeWith(labelled, daemonPod).empty() {
		t.Fatal("a node whose pod carries the pre-pull label counted as empty")
	}
}

package nodeclaim

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func claimWithDeadline(deadline time.Time) *v1beta1.NodeClaim {
	c := &v1beta1.NodeClaim{}
	c.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionInterrupted, Status: metav1.ConditionTrue, Reason: "SpotInterruption"}}
	c.Status.Interruption = &v1beta1.Interruption{Kind: v1beta1.InterruptionSpot, NoticeTime: metav1.NewTime(deadline.Add(-2 * time.Minute)), Deadline: &metav1.Time{Time: deadline}}
	return c
}

// A pod evicted from an interrupted node gets a grace period that ends 5 s before the
// deadline, when its own would end later; never less than a second.
func TestDeletionGraceEndsBeforeTheDeadline(t *testing.T) {
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	pod := func(grace *int64) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: grace}}
	}
	for _, tc := range []struct {
		name string
		left time.Duration
		own  *int64
		want *int64
	}{
		{"the default 30 s fits in 60 s", 60 * time.Second, nil, nil},
		{"the default 30 s is cut to 20 s", 25 * time.Second, nil, ptr.To[int64](20)},
		{"an hour is cut", 2 * time.Minute, ptr.To[int64](3600), ptr.To[int64](115)},
		{"past the kill margin: a second", 3 * time.Second, nil, ptr.To[int64](1)},
		{"a short own grace stays", 10 * time.Second, ptr.To[int64](2), nil},
	} {
		got := deletionGrace(claimWithDeadline(now.Add(tc.left)), pod(tc.own), now)
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s: grace %v, want %v", tc.name, ptr.Deref(got, -1), ptr.Deref(tc.want, -1))
		}
	}
	if got := deletionGrace(&v1beta1.NodeClaim{}, pod(ptr.To[int64](3600)), now); got != nil {
		t.Errorf("a claim without a deadline cut the grace to %d", *got)
	}
}

// A pod already terminating when the deadline became known is deleted again with a
// grace period that ends 5 s before the deadline, once: not when it ends in time.
func TestHurriedGrace(t *testing.T) {
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	claim := claimWithDeadline(now.Add(30 * time.Second))
	leaving := func(endsIn time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: now.Add(endsIn)}}}
	}
	if got := hurriedGrace(claim, leaving(5*time.Minute), now); got == nil || *got != 25 {
		t.Errorf("a pod ending in 5 minutes gets grace %v, want 25", ptr.Deref(got, -1))
	}
	if got := hurriedGrace(claim, leaving(25*time.Second), now); got != nil {
		t.Errorf("a pod ending in time was hurried to %d", *got)
	}
	if got := hurriedGrace(claim, &corev1.Pod{}, now); got != nil {
		t.Errorf("a pod not terminating was hurried to %d", *got)
	}
}

// The drain is forced 15 s before the deadline; a claim without one never is by it.
func TestUntilDeadlineForced(t *testing.T) {
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	if got := untilDeadlineForced(claimWithDeadline(now.Add(time.Minute)), now); got != 45*time.Second {
		t.Errorf("forced in %v, want 45s", got)
	}
	if got := untilDeadlineForced(&v1beta1.NodeClaim{}, now); got < 100*365*24*time.Hour {
		t.Errorf("a claim without a deadline is forced in %v", got)
	}
}

// Pods terminating on an unhealthy Node that is not Ready are left behind; on a Ready
// one, or a healthy claim's, they are waited for.
func TestAbandonsTerminating(t *testing.T) {
	sick := &v1beta1.NodeClaim{}
	sick.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionUnhealthy, Status: metav1.ConditionTrue, Reason: "NotReady"}}
	node := func(ready corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
	}
	if !abandonsTerminating(sick, node(corev1.ConditionUnknown)) {
		t.Error("an unhealthy claim's unreachable Node waits for its terminating pods")
	}
	if abandonsTerminating(sick, node(corev1.ConditionTrue)) {
		t.Error("an unhealthy claim's Ready Node leaves its terminating pods")
	}
	if abandonsTerminating(&v1beta1.NodeClaim{}, node(corev1.ConditionFalse)) {
		t.Error("a healthy claim's NotReady Node leaves its terminating pods")
	}
}

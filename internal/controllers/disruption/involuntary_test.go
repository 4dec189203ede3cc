package disruption

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func interruptedClaim(kind v1beta1.InterruptionKind, notice time.Time, deadline *time.Time) *v1beta1.NodeClaim {
	c := &v1beta1.NodeClaim{}
	c.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionInterrupted, Status: metav1.ConditionTrue, Reason: string(kind)}}
	c.Status.Interruption = &v1beta1.Interruption{Kind: kind, NoticeTime: metav1.NewTime(notice)}
	if deadline != nil {
		c.Status.Interruption.Deadline = &metav1.Time{Time: *deadline}
	}
	return c
}

// An interrupted node is asked to go a third of its notice before the deadline, at
// least 30 s and at most 10 min before it.
func TestDrainByLeavesAThirdOfTheNotice(t *testing.T) {
	notice := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		notice, early time.Duration
	}{
		{"a spot warning's two minutes", 2 * time.Minute, 40 * time.Second},
		{"a short notice", 45 * time.Second, 30 * time.Second},
		{"a scheduled change days ahead", 72 * time.Hour, 10 * time.Minute},
	} {
		deadline := notice.Add(tc.notice)
		at, ok := drainBy(interruptedClaim(v1beta1.InterruptionSpot, notice, &deadline))
		if !ok || !at.Equal(deadline.Add(-tc.early)) {
			t.Errorf("%s: drain by %v (%v), want %v before the deadline", tc.name, at, ok, tc.early)
		}
	}
	if _, ok := drainBy(interruptedClaim(v1beta1.InterruptionScheduledChange, notice, nil)); ok {
		t.Error("a notice without a deadline has a time to drain by")
	}
}

// Only a spot interruption or a scheduled change is an interruption; a rebalance
// recommendation is replaced only in a pool that asks for it; an unhealthy node only
// in a pool that repairs.
func TestInvoluntaryReasons(t *testing.T) {
	now := time.Now()
	pool := &v1beta1.NodePool{}
	if got := involuntaryReason(pool, interruptedClaim(v1beta1.InterruptionSpot, now, &now)); got != v1beta1.DisruptionInterrupted {
		t.Errorf("a spot interruption is %q", got)
	}
	rebalance := interruptedClaim(v1beta1.InterruptionRebalance, now, nil)
	if got := involuntaryReason(pool, rebalance); got != "" {
		t.Errorf("a rebalance recommendation is %q, want voluntary", got)
	}
	if rebalanceRecommended(pool, rebalance) {
		t.Error("a pool that ignores rebalance recommendations replaces on one")
	}
	pool.Spec.Disruption.RebalanceRecommendation = v1beta1.RebalanceReplace
	if !rebalanceRecommended(pool, rebalance) {
		t.Error("a pool that replaces on rebalance recommendations does not")
	}
	sick := &v1beta1.NodeClaim{}
	sick.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionUnhealthy, Status: metav1.ConditionTrue, Reason: "NotReady"}}
	if got := involuntaryReason(pool, sick); got != v1beta1.DisruptionUnhealthy {
		t.Errorf("an unhealthy node is %q", got)
	}
	off := false
	pool.Spec.Repair.Enabled = &off
	if got := involuntaryReason(pool, sick); got != "" {
		t.Errorf("an unhealthy node of a pool that does not repair is %q", got)
	}
}

// An interrupted node draining counts in the pool's total but not as disrupted: its
// going takes none of the budgets.
func TestAnInterruptedDrainTakesNoBudget(t *testing.T) {
	now := time.Now()
	draining := interruptedClaim(v1beta1.InterruptionSpot, now, &now)
	draining.Spec.DesiredState, draining.Status.Phase, draining.Status.NodeName = v1beta1.DesiredTerminated, v1beta1.PhaseDraining, "a"
	given := &v1beta1.NodeClaim{Spec: v1beta1.NodeClaimSpec{DesiredState: v1beta1.DesiredStandby}, Status: v1beta1.NodeClaimStatus{Phase: v1beta1.PhaseDraining, NodeName: "b"}}
	n := census(&v1beta1.NodePool{}, []*v1beta1.NodeClaim{draining, given})
	if n.total != 2 || n.disrupting != 1 {
		t.Fatalf("total %d, disrupting %d; want 2, 1", n.total, n.disrupting)
	}
}

package repair

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		nodes, unhealthy, underway int
		want                       int
	}{
		{"no nodes", 0, 0, 0, 0},
		// One node: 20% rounds down to none, at least one; but one unhealthy node of one
		// is more than half.
		{"1 node, healthy", 1, 0, 0, 1},
		{"1 node, unhealthy: more than half", 1, 1, 0, 0},
		{"2 nodes, 1 unhealthy: half is not more than half", 2, 1, 0, 1},
		{"2 nodes, 1 unhealthy, 1 under way", 2, 1, 1, 0},
		{"2 nodes, both unhealthy", 2, 2, 0, 0},
		{"3 nodes, 1 unhealthy", 3, 1, 0, 1},
		{"3 nodes, 2 unhealthy: more than half", 3, 2, 0, 0},
		{"5 nodes, 1 unhealthy: 20% is one", 5, 1, 0, 1},
		{"5 nodes, 2 unhealthy: still one at once", 5, 2, 0, 1},
		{"5 nodes, 2 unhealthy, 1 under way", 5, 2, 1, 0},
		{"5 nodes, 3 unhealthy: more than half", 5, 3, 0, 0},
		{"10 nodes, 2 unhealthy: 20% is two", 10, 2, 0, 2},
		{"10 nodes, 5 unhealthy: half is not more than half", 10, 5, 0, 2},
		{"10 nodes, 5 unhealthy, 1 under way", 10, 5, 1, 1},
		{"10 nodes, 5 unhealthy, 3 under way: never below none", 10, 5, 3, 0},
		{"10 nodes, 6 unhealthy: more than half", 10, 6, 0, 0},
		{"14 nodes: 20% is 2.8, rounded down", 14, 3, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Allowed(tc.nodes, tc.unhealthy, tc.underway); got != tc.want {
				t.Errorf("Allowed(%d, %d, %d) = %d, want %d", tc.nodes, tc.unhealthy, tc.underway, got, tc.want)
			}
		})
	}
}

func TestOutage(t *testing.T) {
	for _, tc := range []struct {
		nodes, unhealthy int
		want             bool
	}{
		{0, 0, false}, {1, 0, false}, {1, 1, true}, {2, 1, false}, {2, 2, true},
		{3, 1, false}, {3, 2, true}, {5, 2, false}, {5, 3, true}, {10, 5, false}, {10, 6, true},
	} {
		if got := Outage(tc.nodes, tc.unhealthy); got != tc.want {
			t.Errorf("Outage(%d, %d) = %t, want %t", tc.nodes, tc.unhealthy, got, tc.want)
		}
	}
}

func TestCountJudgesOnlyRunningNodes(t *testing.T) {
	claim := func(phase v1beta1.NodeClaimPhase, unhealthy, deleting bool) v1beta1.NodeClaim {
		c := v1beta1.NodeClaim{Status: v1beta1.NodeClaimStatus{Phase: phase}}
		if unhealthy {
			c.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionUnhealthy, Status: metav1.ConditionTrue, Reason: ReasonNotReady}}
		}
		if deleting {
			c.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		}
		return c
	}
	claims := []v1beta1.NodeClaim{
		claim(v1beta1.PhaseRunning, true, false),
		claim(v1beta1.PhaseRunning, false, false),
		claim(v1beta1.PhaseDraining, true, false),
		// Not judged: standby, starting, stopping and warming nodes, and claims going.
		claim(v1beta1.PhaseStandby, true, false),
		claim(v1beta1.PhaseStarting, false, false),
		claim(v1beta1.PhaseStopping, false, false),
		claim(v1beta1.PhaseWarmingUp, false, false),
		claim(v1beta1.PhaseTerminating, true, false),
		claim(v1beta1.PhaseRunning, true, true),
	}
	nodes, unhealthy := Count(claims)
	if nodes != 3 || unhealthy != 2 {
		t.Errorf("Count = %d nodes, %d unhealthy; want 3 nodes, 2 unhealthy", nodes, unhealthy)
	}
}

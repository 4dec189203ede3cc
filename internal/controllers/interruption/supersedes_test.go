package interruption

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestSupersedes(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	notice := func(kind v1beta1.InterruptionKind, at time.Time, deadline time.Duration) *v1beta1.Interruption {
		out := &v1beta1.Interruption{Kind: kind, NoticeTime: metav1.NewTime(at)}
		if deadline > 0 {
			d := metav1.NewTime(at.Add(deadline))
			out.Deadline = &d
		}
		return out
	}
	spot := notice(v1beta1.InterruptionSpot, t0, 2*time.Minute)
	rebalance := notice(v1beta1.InterruptionRebalance, t0.Add(-time.Minute), 0)
	scheduledInADay := notice(v1beta1.InterruptionScheduledChange, t0.Add(-time.Hour), 24*time.Hour)
	scheduledNoStart := notice(v1beta1.InterruptionScheduledChange, t0.Add(-time.Hour), 0)
	cases := []struct {
		name     string
		notice   *v1beta1.Interruption
		recorded *v1beta1.Interruption
		want     bool
	}{
		{"a first notice", spot, nil, true},
		{"a first rebalance", rebalance, nil, true},
		{"the same spot warning again", spot, spot.DeepCopy(), false},
		{"the same rebalance again", rebalance, rebalance.DeepCopy(), false},
		{"a spot warning after a rebalance", spot, rebalance, true},
		{"a rebalance after a spot warning", notice(v1beta1.InterruptionRebalance, t0.Add(time.Minute), 0), spot, false},
		{"a rebalance after a scheduled change", rebalance, scheduledInADay, false},
		{"a later rebalance after a rebalance", notice(v1beta1.InterruptionRebalance, t0, 0), rebalance, false},
		{"a spot warning sooner than a scheduled change", spot, scheduledInADay, true},
		{"a scheduled change later than a spot warning", notice(v1beta1.InterruptionScheduledChange, t0.Add(time.Minute), time.Hour), spot, false},
		{"a spot warning after a scheduled change with no start", spot, scheduledNoStart, true},
		{"a scheduled change with no start after a spot warning", notice(v1beta1.InterruptionScheduledChange, t0.Add(time.Minute), 0), spot, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Supersedes(*tc.notice, tc.recorded); got != tc.want {
				t.Fatalf("Supersedes = %v, want %v", got, tc.want)
			}
		})
	}
}

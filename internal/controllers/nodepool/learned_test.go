package nodepool

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// warmedUp is a claim created at created that warmed up took later.
func warmedUp(created time.Time, took time.Duration) v1beta1.NodeClaim {
	c := v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Time{Time: created}}}
	c.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionWarmedUp, Status: metav1.ConditionTrue, LastTransitionTime: metav1.Time{Time: created.Add(took)}}}
	return c
}

// rated is a calendar running rate times as fast as real time.
type rated struct {
	*clocktesting.FakePassiveClock
	rate float64
}

func (r rated) Rate() float64 { return r.rate }

// The lead is the 90th percentile of the warm-ups (nearest rank), stretched by the
// calendar's rate; 3m when no claim has warmed up.
func TestTheLeadIsTheNinetiethPercentileOfTheWarmups(t *testing.T) {
	start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	var claims []v1beta1.NodeClaim
	for i := 1; i <= 10; i++ {
		claims = append(claims, warmedUp(start.Add(time.Duration(i)*time.Minute), time.Duration(i)*time.Second))
	}
	claims = append(claims, v1beta1.NodeClaim{}) // not warmed up: not counted
	r := &Reconciler{}
	if got := r.warmup(claims); got != 9*time.Second {
		t.Errorf("lead %s, want 9s (the 9th of 10)", got)
	}
	r.Calendar = rated{clocktesting.NewFakePassiveClock(start), 60}
	if got := r.warmup(claims); got != 9*time.Minute {
		t.Errorf("lead on a calendar 60 times as fast: %s, want 9m", got)
	}
	if got := (&Reconciler{}).warmup(nil); got != DefaultWarmup {
		t.Errorf("lead with no warm-up: %s, want %s", got, DefaultWarmup)
	}
	// Only the latest 20 warm-ups count: 20 fast ones after a slow one leave it out.
	slow := []v1beta1.NodeClaim{warmedUp(start, time.Hour)}
	for i := range 20 {
		slow = append(slow, warmedUp(start.Add(2*time.Hour+time.Duration(i)*time.Minute), 5*time.Second))
	}
	if got := (&Reconciler{}).warmup(slow); got != 5*time.Second {
		t.Errorf("lead %s, want 5s from the latest 20", got)
	}
}

// A change is announced once: a pass run again on the status before it sees it was.
func TestALearnedChangeIsAnnouncedOnce(t *testing.T) {
	var n learnedNotes
	if !n.changed("web", [2]int32{1, 0}, [2]int32{4, 0}) {
		t.Fatal("1 to 4 not announced")
	}
	if n.changed("web", [2]int32{1, 0}, [2]int32{4, 0}) {
		t.Fatal("1 to 4 announced again by a pass on the old status")
	}
	if !n.changed("web", [2]int32{4, 0}, [2]int32{0, 4}) {
		t.Fatal("running 4 not announced")
	}
	if n.changed("other", [2]int32{2, 0}, [2]int32{2, 0}) {
		t.Fatal("no change announced")
	}
}

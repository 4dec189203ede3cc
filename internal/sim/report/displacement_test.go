package report

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

func at(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }

func TestMatchReplacementsPairsTheKthDisplacedWithTheKthReplacement(t *testing.T) {
	d := Displacement{At: at(10), EndsAt: at(130), Node: "spot-1", Pods: []DisplacedPod{
		{Owner: "default/web", Deleted: at(20)},
		{Owner: "default/web", Deleted: at(21)},
		{Owner: "default/api", Deleted: at(22)},
	}}
	arrivals := []Arrival{
		// Ready before the notice: not a replacement.
		{Owner: "default/web", Node: "other", Ready: at(5)},
		// On the interrupted Node itself: not a replacement.
		{Owner: "default/web", Node: "spot-1", Ready: at(11)},
		// The second web replacement, listed first: order comes from the Ready times.
		{Owner: "default/web", Node: "standby-1", Ready: at(26), NodeStarted: at(12), NodeRegistered: at(-600)},
		{Owner: "default/web", Node: "standby-1", Ready: at(24), NodeStarted: at(12), NodeRegistered: at(-600)},
		// A third web pod: nothing left to replace.
		{Owner: "default/web", Node: "cold-1", Ready: at(50), NodeRegistered: at(40)},
		{Owner: "default/api", Node: "cold-1", Ready: at(52), NodeRegistered: at(40)},
	}
	rec, killed := MatchReplacements([]Displacement{d}, arrivals, 1, at(200))
	if killed != 0 {
		t.Errorf("killed %d, want 0: every pod was deleted before the end", killed)
	}
	if rec.PodsDisplaced != 3 || rec.PodsReplaced != 3 {
		t.Fatalf("displaced %d replaced %d, want 3 and 3", rec.PodsDisplaced, rec.PodsReplaced)
	}
	got := slices.Clone(rec.Seconds)
	slices.Sort(got)
	if want := []float64{14, 16, 42}; !slices.Equal(got, want) {
		t.Errorf("recovery seconds %v, want %v", got, want)
	}
	if rec.Replacements != (ReplacementPaths{Standby: 2, Cold: 1}) {
		t.Errorf("replacements %+v, want 2 from standby and 1 cold", rec.Replacements)
	}
	if rec.RecoverySeconds.Max != 42 || rec.RecoverySeconds.P50 != 16 {
		t.Errorf("percentiles %+v", rec.RecoverySeconds)
	}
}

func TestMatchReplacementsCountsKilledPodsOnceTheInstanceIsGone(t *testing.T) {
	d := Displacement{At: at(0), EndsAt: at(120), Node: "spot-1", Pods: []DisplacedPod{
		{Owner: "default/web", Deleted: at(60)},  // evicted in time
		{Owner: "default/web", Deleted: at(125)}, // deleted after the instance died
		{Owner: "default/web"},                   // never deleted
	}}
	if _, killed := MatchReplacements([]Displacement{d}, nil, 1, at(119)); killed != 0 {
		t.Errorf("before the end, killed %d, want 0", killed)
	}
	rec, killed := MatchReplacements([]Displacement{d}, nil, 1, at(120))
	if killed != 2 {
		t.Errorf("at the end, killed %d, want 2", killed)
	}
	if rec.PodsReplaced != 0 || rec.PodsDisplaced != 3 {
		t.Errorf("displaced %d replaced %d, want 3 and 0", rec.PodsDisplaced, rec.PodsReplaced)
	}
	// A displacement that takes nothing away (a rebalance, an unhealthy Node) kills none.
	if _, killed := MatchReplacements([]Displacement{{At: at(0), Node: "n", Pods: d.Pods}}, nil, 1, at(1000)); killed != 0 {
		t.Errorf("without an end, killed %d", killed)
	}
}

func TestMatchReplacementsDoesNotReuseAReplacementAcrossInterruptions(t *testing.T) {
	first := Displacement{At: at(0), Node: "a", Pods: []DisplacedPod{{Owner: "ns/web"}}}
	second := Displacement{At: at(30), Node: "b", Pods: []DisplacedPod{{Owner: "ns/web"}}}
	arrivals := []Arrival{
		{Owner: "ns/web", Node: "c", Ready: at(40)},
		{Owner: "ns/web", Node: "d", Ready: at(70)},
	}
	// Listed out of order: the earlier interruption matches first.
	rec, _ := MatchReplacements([]Displacement{second, first}, arrivals, 5, at(100))
	if rec.PodsReplaced != 2 {
		t.Fatalf("replaced %d, want 2", rec.PodsReplaced)
	}
	// Scenario seconds at time scale 5: (40-0)*5 and (70-30)*5.
	if want := []float64{200, 200}; !slices.Equal(rec.Seconds, want) {
		t.Errorf("seconds %v, want %v", rec.Seconds, want)
	}
	// A pod that turns Ready after now is not seen yet.
	if rec, _ := MatchReplacements([]Displacement{first, second}, arrivals, 1, at(50)); rec.PodsReplaced != 1 {
		t.Errorf("at 50 s, replaced %d, want 1", rec.PodsReplaced)
	}
}

package report

import (
	"math"
	"testing"
	"time"
)

func TestPerNodeDividesEachVerbAndResourceByTheNodes(t *testing.T) {
	per, total := PerNode(map[string]int{"patch nodeclaims/status": 30, "create events": 12, "update nodepools/status": 3}, 6)
	want := map[string]float64{"patch nodeclaims/status": 5, "create events": 2, "update nodepools/status": 0.5}
	for key, v := range want {
		if per[key] != v {
			t.Errorf("%s per node = %v, want %v", key, per[key], v)
		}
	}
	if total != 7.5 { // 45 writes over 6 nodes
		t.Errorf("total per node = %v, want 7.5", total)
	}
	if per, total := PerNode(map[string]int{"create events": 3}, 0); len(per) != 0 || total != 0 {
		t.Errorf("no node: got %v, %v; want no figure", per, total)
	}
}

func TestEventWritesCountsEveryVerbOnEventsOnly(t *testing.T) {
	n := EventWrites(map[string]int{"create events": 7, "patch events": 2, "patch nodes": 5, "create eventsx": 1})
	if n != 9 {
		t.Errorf("EventWrites = %d, want 9", n)
	}
}

func TestRateFindsTheBusiestWindow(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(seconds ...float64) []time.Time {
		var times []time.Time
		for _, s := range seconds {
			times = append(times, start.Add(time.Duration(s*float64(time.Second))))
		}
		return times
	}
	// Out of order on purpose. The window [20, 30) holds 20, 21, 22, 29.9: 4 writes; 30
	// is a window's length after 20 and falls outside it.
	rate := Rate(at(30, 0, 20, 21, 29.9, 22, 50), 100*time.Second)
	if rate.Count != 7 || rate.PeakPerSecond != 0.4 || rate.MeanPerSecond != 0.07 {
		t.Errorf("Rate = %+v, want 7 writes, peak 0.4/s (4 in 10 s), mean 0.07/s", rate)
	}
	if rate := Rate(nil, time.Minute); rate != (WriteRate{}) {
		t.Errorf("no write: %+v", rate)
	}
}

func TestPerMinuteTakesTheBusiestMinuteAndTheMean(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	sample := func(seconds int, list, create int) CallSample {
		return CallSample{At: start.Add(time.Duration(seconds) * time.Second), Calls: map[string]int{"List": list, "Create": create}}
	}
	// Every 30 s for 2 minutes. List: 10, 10, 40, 10 calls in each half minute, so the
	// busiest minute is 30 s → 90 s with 50. Create: 0, 0, 0, 6, all in the last half.
	rates := PerMinute([]CallSample{sample(0, 0, 0), sample(30, 10, 0), sample(60, 20, 0), sample(90, 60, 0), sample(120, 70, 6)})
	if got := rates["List"]; got.Peak != 50 || got.Mean != 35 {
		t.Errorf("List = %+v, want peak 50, mean 35 (70 in 2 minutes)", got)
	}
	if got := rates["Create"]; got.Peak != 6 || got.Mean != 3 {
		t.Errorf("Create = %+v, want peak 6, mean 3", got)
	}
	// Samples 62 s apart: the 62 calls between them are 60 a minute.
	late := PerMinute([]CallSample{sample(0, 0, 0), sample(62, 62, 0)})
	if got := late["List"]; got.Peak != 60 {
		t.Errorf("62 calls over 62 s: %+v, want a peak of 60 a minute", got)
	}
	// Under a minute: the calls count as one minute's.
	short := PerMinute([]CallSample{sample(0, 0, 0), sample(20, 12, 0)})
	if got := short["List"]; got.Peak != 12 || got.Mean != 12 {
		t.Errorf("short run List = %+v, want peak 12, mean 12", got)
	}
}

func TestBucketQuantileInterpolatesWithinTheBucket(t *testing.T) {
	// 100 observations: 50 ≤ 0.1, 90 ≤ 0.2, 100 ≤ 0.4.
	buckets := []Bucket{{0.4, 100}, {0.1, 50}, {0.2, 90}, {math.Inf(1), 100}}
	for _, c := range []struct{ q, want float64 }{
		{0.5, 0.1},   // rank 50: the top of the first bucket
		{0.25, 0.05}, // rank 25: halfway through [0, 0.1]
		{0.7, 0.15},  // rank 70: 20 of the 40 in (0.1, 0.2]
		{0.99, 0.38}, // rank 99: 9 of the 10 in (0.2, 0.4]
	} {
		if got := BucketQuantile(c.q, buckets); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("q%v = %v, want %v", c.q, got, c.want)
		}
	}
	// Past the last finite bound: that bound, as histogram_quantile answers.
	if got := BucketQuantile(0.99, []Bucket{{1, 10}, {math.Inf(1), 100}}); got != 1 {
		t.Errorf("in the +Inf bucket: %v, want 1", got)
	}
	if got := BucketQuantile(0.5, []Bucket{{1, 0}, {math.Inf(1), 0}}); !math.IsNaN(got) {
		t.Errorf("no observation: %v, want NaN", got)
	}
}

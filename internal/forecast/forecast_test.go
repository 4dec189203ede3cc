package forecast

import (
	"testing"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

var berlin, _ = time.LoadLocation("Europe/Berlin")

// history builds a history from nodes by date (zone "") at one interval index.
func history(since string, index int32, nodes map[string]int32) *v1beta1.NodePoolDemandSpec {
	h := &v1beta1.NodePoolDemandSpec{Since: since}
	for date, n := range nodes {
		Add(h, Key{Date: date, Index: index}, n)
	}
	h.Since = since
	return h
}

func settings(percentile int32, halfLife time.Duration) Settings {
	return Settings{Clock: Clock{Interval: 15 * time.Minute, Location: time.UTC}, Percentile: percentile, HalfLife: halfLife, MinDays: 3}
}

func TestWeightedPercentileOfEqualWeights(t *testing.T) {
	values, weights := []int32{30, 0, 20, 10}, []float64{1, 1, 1, 1}
	// Sorted 0, 10, 20, 30, each a quarter of the weight.
	for _, c := range []struct{ p, want int32 }{{50, 10}, {75, 20}, {76, 30}, {90, 30}, {100, 30}} {
		if got := WeightedPercentile(values, weights, c.p); got != c.want {
			t.Errorf("p%d = %d, want %d", c.p, got, c.want)
		}
	}
}

func TestWeightedPercentileFollowsTheWeights(t *testing.T) {
	// 0 weighs 3 of 4: p75 is 0, anything above is 8.
	values, weights := []int32{0, 8}, []float64{3, 1}
	if got := WeightedPercentile(values, weights, 75); got != 0 {
		t.Errorf("p75 = %d, want 0", got)
	}
	if got := WeightedPercentile(values, weights, 76); got != 8 {
		t.Errorf("p76 = %d, want 8", got)
	}
}

// Days weigh 0.5^(age/halfLife): with a half-life of a day, yesterday's 0 (weight 0.5)
// outweighs the 10s of the two days before (0.25 + 0.125), so p50 is 0; with a very long
// half-life the three days weigh alike and p50 is 10.
func TestOlderDaysCountLess(t *testing.T) {
	h := history("2026-11-20", 36, map[string]int32{"2026-11-21": 10, "2026-11-22": 10})
	slot := Clock{Interval: 15 * time.Minute, Location: time.UTC}.SlotAt(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	// Since 11-20, before 11-24: 11-20 (age 4, 0), 11-21 (age 3, 10), 11-22 (age 2, 10),
	// 11-23 (age 1, 0). Half-life 1 day: zeros weigh 1/16 + 1/2 = 0.5625 of 0.9375 total
	// = 0.6; p50 is 0 and p70 is 10.
	if est := Forecast(h, settings(50, 24*time.Hour), slot); est.Nodes != 0 || est.Days != 4 {
		t.Errorf("half-life 1d, p50: %+v, want 0 nodes over 4 days", est)
	}
	if est := Forecast(h, settings(70, 24*time.Hour), slot); est.Nodes != 10 {
		t.Errorf("half-life 1d, p70: %+v, want 10", est)
	}
	// Half-life 10000h: the four days weigh almost alike (0.9983 to 0.9934), half of
	// them 10, so p51 is 10.
	if est := Forecast(h, settings(51, 10000*time.Hour), slot); est.Nodes != 10 {
		t.Errorf("long half-life, p51: %+v, want 10", est)
	}
}

// The same weekday weighs twice: a peak of 8 seen only a week ago holds 2 of 8 weights
// (days of nearly equal weight), so p80 is 8; seen six days ago, it holds 1 of 7, and
// p80 is 0.
func TestTheSameWeekdayCountsDouble(t *testing.T) {
	c := Clock{Interval: 15 * time.Minute, Location: time.UTC}
	slot := c.SlotAt(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)) // a Tuesday
	s := settings(80, 100000*time.Hour)
	weekAgo := history("2026-11-17", 36, map[string]int32{"2026-11-17": 8})
	if est := Forecast(weekAgo, s, slot); est.Nodes != 8 || est.Days != 7 {
		t.Errorf("peak on the same weekday: %+v, want 8 over 7 days", est)
	}
	sixDaysAgo := history("2026-11-17", 36, map[string]int32{"2026-11-18": 8})
	if est := Forecast(sixDaysAgo, s, slot); est.Nodes != 0 {
		t.Errorf("peak on another weekday: %+v, want 0", est)
	}
}

// Each zone's percentile is taken on its own, and the pool's forecast is their sum.
func TestZonesAreForecastApartAndSummed(t *testing.T) {
	h := &v1beta1.NodePoolDemandSpec{}
	for _, date := range []string{"2026-11-21", "2026-11-22", "2026-11-23"} {
		Add(h, Key{Date: date, Zone: "a", Index: 4}, 2)
	}
	Add(h, Key{Date: "2026-11-23", Zone: "b", Index: 4}, 3)
	slot := Clock{Interval: 15 * time.Minute, Location: time.UTC}.SlotAt(time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC))
	// p100: a's 2 plus b's 3. p50: a's 2 plus b's 0 (two days of three had none).
	if est := Forecast(h, settings(100, 168*time.Hour), slot); est.Nodes != 5 || est.Days != 3 {
		t.Errorf("p100: %+v, want 5 over 3 days", est)
	}
	if est := Forecast(h, settings(50, 168*time.Hour), slot); est.Nodes != 2 {
		t.Errorf("p50: %+v, want 2", est)
	}
}

// Days before the history's start do not count, and a day after it with no entry
// counts as no demand.
func TestDaysWithoutEntriesCountAsNoDemand(t *testing.T) {
	h := history("2026-11-14", 36, map[string]int32{"2026-11-23": 4})
	slot := Clock{Interval: 15 * time.Minute, Location: time.UTC}.SlotAt(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	// Ten days, weights 0.5^(age/7) (age 7 doubled) sum to 6.539; the 4 of yesterday
	// weighs 0.906 of it, 13.9%: p80 is 0, p90 is 4.
	if est := Forecast(h, settings(80, 168*time.Hour), slot); est.Nodes != 0 || est.Days != 10 {
		t.Errorf("p80: %+v, want 0 over 10 days (one of ten saw demand)", est)
	}
	if est := Forecast(h, settings(90, 168*time.Hour), slot); est.Nodes != 4 {
		t.Errorf("p90: %+v, want 4", est)
	}
	empty := Forecast(&v1beta1.NodePoolDemandSpec{}, settings(90, 168*time.Hour), slot)
	if empty != (Estimate{}) {
		t.Errorf("no history: %+v, want nothing", empty)
	}
}

func TestConfidenceNeedsMinDaysOfTheLastSeven(t *testing.T) {
	slot := Clock{Interval: 15 * time.Minute, Location: time.UTC}.SlotAt(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	s := settings(90, 168*time.Hour)
	two := history("2026-11-01", 36, map[string]int32{"2026-11-23": 1, "2026-11-20": 1, "2026-11-16": 1}) // 11-16 is 8 days back
	if est := Forecast(two, s, slot); est.Confident {
		t.Errorf("demand on 2 of the last 7 days is confident: %+v", est)
	}
	three := history("2026-11-01", 36, map[string]int32{"2026-11-23": 1, "2026-11-20": 1, "2026-11-17": 1})
	if est := Forecast(three, s, slot); !est.Confident {
		t.Errorf("demand on 3 of the last 7 days is not confident: %+v", est)
	}
}

// The clocks go forward in Berlin on 2026-03-29: 09:00 is still slot 36 (the wall
// clock), though it is 23 hours after 09:00 the day before; the slots skip the hour
// that does not exist.
func TestSlotsFollowTheWallClockAcrossDaylightSaving(t *testing.T) {
	c := Clock{Interval: 15 * time.Minute, Location: berlin}
	before, after := time.Date(2026, 3, 28, 9, 0, 0, 0, berlin), time.Date(2026, 3, 29, 9, 0, 0, 0, berlin)
	if after.Sub(before) != 23*time.Hour || c.SlotAt(before).Index != 36 || c.SlotAt(after).Index != 36 {
		t.Fatalf("09:00 on both days: slots %d and %d, %s apart", c.SlotAt(before).Index, c.SlotAt(after).Index, after.Sub(before))
	}
	if got := c.SlotAt(before.Add(24 * time.Hour)).Index; got != 40 {
		t.Errorf("24 hours after 09:00 on the 28th is slot %d, want 40 (10:00)", got)
	}
	var indexes []int32
	for _, s := range c.Overlapping(time.Date(2026, 3, 29, 1, 50, 0, 0, berlin), time.Date(2026, 3, 29, 3, 10, 0, 0, berlin)) {
		indexes = append(indexes, s.Index)
	}
	if len(indexes) != 2 || indexes[0] != 7 || indexes[1] != 12 {
		t.Errorf("slots from 01:50 to 03:10 on the 29th: %v, want [7 12] (02:00-02:59 does not exist)", indexes)
	}
	h := history("2026-03-26", 36, map[string]int32{"2026-03-26": 4, "2026-03-27": 4, "2026-03-28": 4})
	s := Settings{Clock: c, Percentile: 90, HalfLife: 168 * time.Hour, MinDays: 3}
	est := Forecast(h, s, c.SlotAt(after))
	if est.Nodes != 4 || !est.Confident {
		t.Errorf("09:00 on the day the clocks change: %+v, want 4, confident", est)
	}
	if got := c.Bucket(c.SlotAt(after)); got != "Sun 09:00-09:15 Europe/Berlin" {
		t.Errorf("bucket %q", got)
	}
}

// The outlook looks lead + interval ahead: with a 3m warm-up and 15m slots, a 09:00 peak
// of 4 is the target from 08:42 (when 09:00 comes into [now, now+18m]) to 09:15.
func TestTheOutlookLooksAheadByTheWarmup(t *testing.T) {
	h := history("2026-11-19", 36, map[string]int32{"2026-11-19": 4, "2026-11-20": 4, "2026-11-21": 4, "2026-11-22": 4, "2026-11-23": 4})
	s := settings(90, 168*time.Hour)
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 24, hh, mm, 0, 0, time.UTC) }
	cases := []struct {
		now      time.Time
		forecast int32
		next     time.Time
	}{
		{at(8, 40), 0, at(8, 42)}, // [08:40, 08:58]: slots 08:30 and 08:45; next: 09:00 comes in at 08:42
		{at(8, 42), 4, at(8, 45)}, // [08:42, 09:00]: 09:00 is in
		{at(8, 50), 4, at(8, 57)}, // [08:50, 09:08]; at 08:57 09:15 comes in
		{at(9, 14), 4, at(9, 15)}, // still in 09:00
		{at(9, 16), 0, at(9, 27)}, // [09:16, 09:34]: 09:15 and 09:30
	}
	for _, c := range cases {
		o := Look(h, s, c.now, 3*time.Minute, nil)
		if o.Forecast != c.forecast || !o.Next.Equal(c.next) || o.Running != 0 {
			t.Errorf("at %s: forecast %d, next %s, running %d; want %d, next %s", c.now.Format("15:04"), o.Forecast, o.Next.Format("15:04"), o.Running, c.forecast, c.next.Format("15:04"))
		}
	}
	o := Look(h, s, at(8, 50), 3*time.Minute, nil)
	if o.Bucket != "Tue 09:00-09:15 UTC" || o.Days != 5 {
		t.Errorf("at 08:50: bucket %q over %d days, want Tue 09:00-09:15 UTC over 5", o.Bucket, o.Days)
	}
}

// With preStart 2m, a confident peak at 09:00 runs its nodes from 08:58 to 09:15; an
// unconfident one never does.
func TestPreStartRunsOnlyAConfidentPeak(t *testing.T) {
	s := settings(90, 168*time.Hour)
	lead := 2 * time.Minute
	confident := history("2026-11-19", 36, map[string]int32{"2026-11-21": 4, "2026-11-22": 4, "2026-11-23": 4})
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 24, hh, mm, 0, 0, time.UTC) }
	for _, c := range []struct {
		now     time.Time
		running int32
	}{{at(8, 57), 0}, {at(8, 58), 4}, {at(9, 10), 4}, {at(9, 15), 0}} {
		if o := Look(confident, s, c.now, 3*time.Minute, &lead); o.Running != c.running {
			t.Errorf("at %s: running %d, want %d", c.now.Format("15:04"), o.Running, c.running)
		}
	}
	if o := Look(confident, s, at(8, 58), 3*time.Minute, &lead); o.RunningFor.Index != 36 || !o.RunningFor.Start.Equal(at(9, 0)) {
		t.Errorf("at 08:58 the nodes run for slot %d from %s, want 36 from 09:00", o.RunningFor.Index, o.RunningFor.Start.Format("15:04"))
	}
	if o := Look(confident, s, at(8, 50), 3*time.Minute, &lead); !o.Next.Equal(at(8, 57)) {
		t.Errorf("at 08:50 next %s, want 08:57 (09:15 comes into the target window first)", o.Next.Format("15:04"))
	}
	if o := Look(confident, s, at(8, 57), 3*time.Minute, &lead); !o.Next.Equal(at(8, 58)) {
		t.Errorf("at 08:57 next %s, want 08:58 (the pre-start)", o.Next.Format("15:04"))
	}
	twoDays := history("2026-11-19", 36, map[string]int32{"2026-11-22": 4, "2026-11-23": 4})
	if o := Look(twoDays, s, at(9, 0), 3*time.Minute, &lead); o.Running != 0 || o.Forecast != 4 {
		t.Errorf("peak seen on 2 days (minDays 3): running %d forecast %d, want 0 and 4", o.Running, o.Forecast)
	}
}

func TestKeepingIsFourHalfLivesWithinFourWeeksAnd120Days(t *testing.T) {
	for _, c := range []struct {
		halfLife time.Duration
		want     int
	}{{24 * time.Hour, 28}, {168 * time.Hour, 28}, {240 * time.Hour, 40}, {720 * time.Hour, 120}, {30 * time.Hour, 28}, {170 * time.Hour, 29}} {
		if got := Keeping(c.halfLife); got != c.want {
			t.Errorf("Keeping(%s) = %d, want %d", c.halfLife, got, c.want)
		}
	}
}

func TestCompactDropsOldDaysAndMovesTheStart(t *testing.T) {
	h := history("2026-10-01", 1, map[string]int32{"2026-10-30": 1, "2026-10-31": 2, "2026-11-26": 3})
	// 28 days up to 2026-11-27 begin on 2026-10-31.
	if !Compact(h, "2026-11-27", 28) {
		t.Fatal("nothing compacted")
	}
	if h.Since != "2026-10-31" || len(h.Days) != 2 || h.Days[0].Date != "2026-10-31" {
		t.Fatalf("after compaction: %+v", h)
	}
	if Compact(h, "2026-11-27", 28) {
		t.Error("a second compaction changed something")
	}
	// The forecast reads no further back than it keeps either.
	old := history("2026-01-01", 1, map[string]int32{"2026-01-02": 9})
	slot := Clock{Interval: 15 * time.Minute, Location: time.UTC}.SlotAt(time.Date(2026, 11, 27, 0, 15, 0, 0, time.UTC))
	if est := Forecast(old, settings(100, 168*time.Hour), slot); est.Nodes != 0 || est.Days != 28 {
		t.Errorf("%+v: want 0 over the 28 days kept", est)
	}
}

func TestAddKeepsOrderAndSums(t *testing.T) {
	h := &v1beta1.NodePoolDemandSpec{}
	Add(h, Key{Date: "2026-11-24", Zone: "b", Index: 5}, 1)
	Add(h, Key{Date: "2026-11-23", Zone: "a", Index: 9}, 2)
	Add(h, Key{Date: "2026-11-24", Zone: "a", Index: 7}, 1)
	Add(h, Key{Date: "2026-11-24", Zone: "b", Index: 5}, 2)
	Add(h, Key{Date: "2026-11-24", Zone: "b", Index: 3}, 1)
	Add(h, Key{Date: "2026-11-24", Zone: "b", Index: 3}, 0)
	if h.Since != "2026-11-23" || len(h.Days) != 2 || h.Days[0].Date != "2026-11-23" {
		t.Fatalf("days %+v since %s", h.Days, h.Since)
	}
	zones := h.Days[1].Zones
	if len(zones) != 2 || zones[0].Zone != "a" || zones[1].Zone != "b" {
		t.Fatalf("zones %+v", zones)
	}
	if iv := zones[1].Intervals; len(iv) != 2 || iv[0] != (v1beta1.IntervalDemand{Index: 3, Nodes: 1}) || iv[1] != (v1beta1.IntervalDemand{Index: 5, Nodes: 3}) {
		t.Errorf("zone b's intervals %+v, want 3:1 and 5:3", iv)
	}
}

func BenchmarkLookOverAFullHistory(b *testing.B) {
	h := &v1beta1.NodePoolDemandSpec{}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := 0; d < maxDays; d++ {
		date := start.AddDate(0, 0, d).Format(dateLayout)
		for _, zone := range []string{"a", "b", "c"} {
			for i := int32(0); i < 96; i++ {
				Add(h, Key{Date: date, Zone: zone, Index: i}, (int32(d)+i)%5)
			}
		}
	}
	s := settings(90, 168*time.Hour)
	lead := 2 * time.Minute
	now := start.AddDate(0, 0, maxDays).Add(9 * time.Hour)
	b.ResetTimer()
	for b.Loop() {
		Look(h, s, now, 3*time.Minute, &lead)
	}
}

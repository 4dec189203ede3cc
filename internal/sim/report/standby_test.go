package report

import (
	"math"
	"testing"
	"time"
)

func near(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

// Between observations a pool is charged the count seen first for the calendar time
// between them, which runs at the time scale.
func TestStandbyMeterIntegratesOverScenarioTime(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	m := NewStandbyMeter(start, 10)
	m.Observe(start, map[string]int{"fixed": 4, "none": 0})
	// 6 wall minutes at 10x: one calendar hour at 4 nodes.
	m.Observe(start.Add(6*time.Minute), map[string]int{"fixed": 2, "none": 0})
	// 3 wall minutes: half an hour at 2 nodes.
	m.Observe(start.Add(9*time.Minute), map[string]int{"fixed": 2})

	got := m.Hours()
	if !near(got["fixed"].NodeHours, 4+1) || got["fixed"].Peak != 4 {
		t.Errorf("fixed: %+v, want 5 node-hours, peak 4", got["fixed"])
	}
	if h, ok := got["none"]; !ok || h.NodeHours != 0 || h.Peak != 0 {
		t.Errorf("none: %+v (listed %v), want listed with 0", h, ok)
	}
}

// A setClock jump charges the counts held at the jump for the hours skipped; the
// first setting only places the calendar, and a jump backwards charges no skip.
func TestStandbyMeterChargesJumpsAtTheCountsHeld(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	m := NewStandbyMeter(start, 60)
	m.Observe(start, map[string]int{"pool": 3})
	monday := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	// The first setting: the minute before it (one calendar hour at 60x) is charged,
	// the leap from the scenario's own clock to Monday is not.
	wall := start.Add(time.Minute)
	m.Observe(wall, map[string]int{"pool": 3})
	m.SetCalendar(wall, monday)
	if got := m.Hours()["pool"].NodeHours; !near(got, 3) {
		t.Fatalf("after the first setting: %v node-hours, want 3 (one hour before it)", got)
	}

	// Half a wall minute later (30 calendar minutes) the pool holds 2; then the clock
	// jumps to 08:00 the next day: 22 hours skipped at 2 nodes.
	wall = wall.Add(30 * time.Second)
	m.Observe(wall, map[string]int{"pool": 2})
	m.SetCalendar(wall, monday.Add(22*time.Hour+30*time.Minute))
	want := 3 + 3*0.5 + 2*22.0
	if got := m.Hours()["pool"].NodeHours; !near(got, want) {
		t.Fatalf("after the jump: %v node-hours, want %v", got, want)
	}

	// The calendar runs on from the jump: 6 wall seconds are 6 calendar minutes at 2.
	wall = wall.Add(6 * time.Second)
	m.Observe(wall, map[string]int{"pool": 0})
	want += 2 * 0.1
	if got := m.Hours()["pool"].NodeHours; !near(got, want) {
		t.Fatalf("after the jump and 6 minutes: %v node-hours, want %v", got, want)
	}

	// Back an hour with 5 held: nothing skipped, nothing charged; then 6 minutes at 5.
	m.Observe(wall, map[string]int{"pool": 5})
	m.SetCalendar(wall, monday)
	wall = wall.Add(6 * time.Second)
	m.Observe(wall, map[string]int{"pool": 5})
	want += 5 * 0.1
	if got := m.Hours()["pool"]; !near(got.NodeHours, want) || got.Peak != 5 {
		t.Fatalf("after a jump back: %+v, want %v node-hours and peak 5", got, want)
	}
}

// An observation older than the last (two goroutines racing) charges nothing and does
// not move the meter back.
func TestStandbyMeterIgnoresTimeGoingBack(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	m := NewStandbyMeter(start, 1)
	m.Observe(start.Add(time.Hour), map[string]int{"pool": 1})
	m.Observe(start, map[string]int{"pool": 7})
	m.Observe(start.Add(2*time.Hour), map[string]int{"pool": 0})
	if got := m.Hours()["pool"].NodeHours; !near(got, 7) {
		t.Errorf("%v node-hours, want 7: the late observation's count for the hour after the last", got)
	}
}

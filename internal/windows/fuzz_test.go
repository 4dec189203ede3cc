package windows

import (
	"testing"
	"time"
)

// FuzzParse: any input is read or refused with an error, never a panic, and a window
// that is read answers Active for any moment.
func FuzzParse(f *testing.F) {
	f.Add("mon-fri", "8-17", "Europe/Berlin")
	f.Add("fri-mon", "22-6", "UTC")
	f.Add("mon,wed,fri-sun", "0,3-4,23", "America/New_York")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, days, hours, zone string) {
		w, err := Parse(days, hours, zone)
		if err != nil {
			return
		}
		w.Active(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	})
}

// FuzzNextChange: the window keeps its state from a moment until NextChange, and has
// the other one at NextChange.
func FuzzNextChange(f *testing.F) {
	f.Add("mon-fri", "8-17", "Europe/Berlin", int64(1_795_000_000))
	f.Add("sun", "2", "Europe/Berlin", int64(1_774_744_200)) // the spring-forward night of 2026
	f.Add("fri-mon", "22-6", "Australia/Lord_Howe", int64(1_800_000_000))
	zones := []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham"}
	f.Fuzz(func(t *testing.T, days, hours, zone string, seconds int64) {
		if len(zone) > 0 && zone[0] < byte(len(zones)) {
			zone = zones[zone[0]]
		}
		w, err := Parse(days, hours, zone)
		if err != nil {
			return
		}
		from := time.Unix(seconds%4_000_000_000, 0).UTC()
		next := w.NextChange(from)
		if next.IsZero() {
			return
		}
		if !next.After(from) || next.Sub(from) > horizon {
			t.Fatalf("NextChange(%s) = %s: not within the horizon after it", from, next)
		}
		state := w.Active(from)
		for m := from; m.Before(next); m = m.Add(time.Minute) {
			if w.Active(m) != state {
				t.Fatalf("the window changed at %s, before NextChange %s", m, next)
			}
		}
		if w.Active(next) == state {
			t.Fatalf("the window did not change at NextChange %s", next)
		}
	})
}

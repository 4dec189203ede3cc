package windows

import (
	"testing"
	"time"
)

func mustParse(t *testing.T, days, hours, zone string) Window {
	t.Helper()
	w, err := Parse(days, hours, zone)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func at(t *testing.T, zone, value string) time.Time {
	t.Helper()
	location, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := time.ParseInLocation("2006-01-02 15:04", value, location)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

func TestActive(t *testing.T) {
	cases := []struct {
		name, days, hours, zone, at string
		want                        bool
	}{
		{"office hours, inside", "mon-fri", "8-17", "Europe/Berlin", "2026-11-23 08:00", true},
		{"office hours, last hour", "mon-fri", "8-17", "Europe/Berlin", "2026-11-23 17:59", true},
		{"office hours, after", "mon-fri", "8-17", "Europe/Berlin", "2026-11-23 18:00", false},
		{"office hours, before", "mon-fri", "8-17", "Europe/Berlin", "2026-11-23 07:59", false},
		{"office hours, saturday", "mon-fri", "8-17", "Europe/Berlin", "2026-11-21 10:00", false},
		{"midnight belongs to the new day", "sat", "0-23", "UTC", "2026-11-21 00:00", true},
		{"the minute before midnight belongs to the old day", "sat", "0-23", "UTC", "2026-11-20 23:59", false},
		{"hours wrap: late", "mon-sun", "22-6", "UTC", "2026-11-21 23:30", true},
		{"hours wrap: early", "mon-sun", "22-6", "UTC", "2026-11-21 06:59", true},
		{"hours wrap: outside", "mon-sun", "22-6", "UTC", "2026-11-21 07:00", false},
		{"days wrap: sunday in fri-mon", "fri-mon", "", "UTC", "2026-11-22 12:00", true},
		{"days wrap: tuesday outside fri-mon", "fri-mon", "", "UTC", "2026-11-24 12:00", false},
		{"lists", "mon,wed,fri-sat", "1,3-4,23", "UTC", "2026-11-25 03:15", true},
		{"lists: hour not listed", "mon,wed,fri-sat", "1,3-4,23", "UTC", "2026-11-25 02:15", false},
		{"days and hours are read one by one", "fri", "22-6", "UTC", "2026-11-21 02:00", false},
		{"leap day", "tue", "12", "UTC", "2028-02-29 12:30", true},
		{"a single hour", "mon-sun", "0", "UTC", "2026-11-21 00:59", true},
		{"two-digit hours", "mon-sun", "08-09", "UTC", "2026-11-21 08:00", true},
		{"the zone decides the day", "sat", "", "Pacific/Auckland", "2026-11-20 12:00", true}, // Saturday 01:00 in Auckland
	}
	for _, c := range cases {
		w := mustParse(t, c.days, c.hours, c.zone)
		moment := at(t, "UTC", c.at)
		if c.zone != "Pacific/Auckland" {
			moment = at(t, c.zone, c.at)
		}
		if got := w.Active(moment); got != c.want {
			t.Errorf("%s: Active(%s) = %v, want %v", c.name, c.at, got, c.want)
		}
	}
}

func TestEveryWeekday(t *testing.T) {
	days := []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	sunday := at(t, "UTC", "2026-11-22 12:00")
	for i, day := range days {
		w := mustParse(t, day, "", "UTC")
		for j := range days {
			moment := sunday.AddDate(0, 0, j)
			if got := w.Active(moment); got != (i == j) {
				t.Errorf("window %s at %s: active %v", day, moment.Weekday(), got)
			}
		}
	}
}

func TestNextChange(t *testing.T) {
	office := mustParse(t, "mon-fri", "8-17", "Europe/Berlin")
	cases := []struct {
		name     string
		w        Window
		from, to string // in Europe/Berlin
	}{
		{"opens at 08:00", office, "2026-11-23 07:10", "2026-11-23 08:00"},
		{"closes at 18:00", office, "2026-11-23 08:00", "2026-11-23 18:00"},
		{"friday evening to monday morning", office, "2026-11-27 18:00", "2026-11-30 08:00"},
		// 2026-03-29: clocks go from 02:00 to 03:00 in Berlin.
		{"spring forward: an hour that never comes is skipped", mustParse(t, "sun", "2", "Europe/Berlin"), "2026-03-29 00:30", "2026-04-05 02:00"},
		{"spring forward: 3-5 opens at the new 03:00", mustParse(t, "sun", "3-5", "Europe/Berlin"), "2026-03-29 01:30", "2026-03-29 03:00"},
	}
	for _, c := range cases {
		got := c.w.NextChange(at(t, "Europe/Berlin", c.from))
		if want := at(t, "Europe/Berlin", c.to); !got.Equal(want) {
			t.Errorf("%s: NextChange = %s, want %s", c.name, got.In(want.Location()), want)
		}
	}
}

func TestFallBackRepeatsTheHourInsideTheWindow(t *testing.T) {
	// 2026-10-25: clocks go from 03:00 back to 02:00 in Berlin; 02:xx comes twice.
	w := mustParse(t, "sun", "2", "Europe/Berlin")
	first := time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)  // 02:00 CEST
	second := time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC) // 02:00 CET
	after := time.Date(2026, 10, 25, 2, 0, 0, 0, time.UTC)  // 03:00 CET
	if !w.Active(first) || !w.Active(second) || w.Active(after) {
		t.Fatalf("active at the first 02:00 %v, the second %v, 03:00 %v; want true, true, false", w.Active(first), w.Active(second), w.Active(after))
	}
	if got := w.NextChange(first); !got.Equal(after) {
		t.Fatalf("the window closes at %s, want %s: two hours long that night", got, after)
	}
}

func TestAlwaysAndNeverChangeNothing(t *testing.T) {
	now := at(t, "UTC", "2026-11-21 12:00")
	if next := mustParse(t, "", "", "UTC").NextChange(now); !next.IsZero() {
		t.Fatalf("an always-on window changes at %s", next)
	}
}

func TestEvaluateLetsTheLastDeclaredWin(t *testing.T) {
	ws := []Window{mustParse(t, "mon-fri", "0-23", "UTC"), mustParse(t, "mon-fri", "8-17", "UTC")}
	active, next := Evaluate(ws, at(t, "UTC", "2026-11-23 09:00"))
	if active != 1 || !next.Equal(at(t, "UTC", "2026-11-23 18:00")) {
		t.Fatalf("active %d next %s; want the second window, until 18:00", active, next)
	}
	active, _ = Evaluate(ws, at(t, "UTC", "2026-11-23 19:00"))
	if active != 0 {
		t.Fatalf("active %d at 19:00, want the first window", active)
	}
	if active, _ := Evaluate(ws, at(t, "UTC", "2026-11-21 09:00")); active != -1 {
		t.Fatalf("active %d on a Saturday, want none", active)
	}
}

func TestParseRejects(t *testing.T) {
	for _, c := range [][3]string{
		{"monday", "", ""}, {"mon-", "", ""}, {"mon,,tue", "", ""}, {"", "24", ""}, {"", "-1", ""},
		{"", "9-", ""}, {"", "1-2-3", ""}, {"", "009", ""}, {"", "", "Mars/Olympus"},
	} {
		if _, err := Parse(c[0], c[1], c[2]); err == nil {
			t.Errorf("Parse(%q, %q, %q) accepted", c[0], c[1], c[2])
		}
	}
}

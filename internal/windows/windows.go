// Package windows reads and evaluates a pool's time windows. It is pure: a window is a
// set of days and a set of hours read in a time zone, and a moment is inside it when,
// on the wall clock of that zone, its day and its hour are both in the sets.
//
// Days and hours are read one by one, not as spans: "fri" with "22-6" covers Friday
// from 00:00 to 06:59 and from 22:00 to 23:59, not Friday night into Saturday. A
// Friday-night-to-Saturday-morning window is written as two windows, or as "fri-sat"
// with "22-6" when Saturday night may be covered too.
//
// Daylight-saving time follows the wall clock: in a spring-forward gap the missing hour
// never comes, so a window of that hour alone is skipped that day; in a fall-back
// overlap the repeated hour is inside the window both times.
package windows

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dayNames index time.Weekday: Sunday is 0.
var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Window is a parsed window.
type Window struct {
	days     [7]bool
	hours    [24]bool
	location *time.Location
}

// Parse reads a window's days (mon…sun, inclusive ranges that may wrap such as fri-mon,
// comma lists of both; empty is every day), hours (0…23, inclusive ranges that may wrap
// such as 22-6, comma lists of both; empty is all day) and IANA time zone (empty is
// UTC).
func Parse(days, hours, timeZone string) (Window, error) {
	var w Window
	if days == "" {
		days = "mon-sun"
	}
	if hours == "" {
		hours = "0-23"
	}
	if err := parseList(days, 7, dayIndex, w.days[:]); err != nil {
		return Window{}, fmt.Errorf("days %q: %w", days, err)
	}
	if err := parseList(hours, 24, hourIndex, w.hours[:]); err != nil {
		return Window{}, fmt.Errorf("hours %q: %w", hours, err)
	}
	if timeZone == "" {
		timeZone = "UTC"
	}
	location, err := Location(timeZone)
	if err != nil {
		return Window{}, fmt.Errorf("time zone %q: %w", timeZone, err)
	}
	w.location = location
	return w, nil
}

// parseList sets in set the items of a comma list of items and inclusive ranges; a
// range whose end comes before its start wraps around size.
func parseList(list string, size int, index func(string) (int, error), set []bool) error {
	for _, part := range strings.Split(list, ",") {
		first, last, isRange := strings.Cut(part, "-")
		from, err := index(first)
		if err != nil {
			return err
		}
		to := from
		if isRange {
			if to, err = index(last); err != nil {
				return err
			}
		}
		for i := from; ; i = (i + 1) % size {
			set[i] = true
			if i == to {
				break
			}
		}
	}
	return nil
}

func dayIndex(s string) (int, error) {
	for i, name := range dayNames {
		if s == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%q is not a day: use mon, tue, wed, thu, fri, sat or sun", s)
}

func hourIndex(s string) (int, error) {
	h, err := strconv.Atoi(s)
	if err != nil || h < 0 || h > 23 || s != strconv.Itoa(h) && s != fmt.Sprintf("%02d", h) {
		return 0, fmt.Errorf("%q is not an hour from 0 to 23", s)
	}
	return h, nil
}

// Active reports whether t is inside the window.
func (w Window) Active(t time.Time) bool {
	local := t.In(w.location)
	return w.days[local.Weekday()] && w.hours[local.Hour()]
}

// step is how finely NextChange looks: every time zone in use today is offset from UTC
// by a whole number of quarter hours, so a local hour starts on a quarter hour of UTC.
const step = 15 * time.Minute

// horizon bounds NextChange: a week, and a day for a daylight-saving shift.
const horizon = 8 * 24 * time.Hour

// NextChange returns the first moment after t when the window opens or closes, or zero
// when it never does (it is always or never active).
func (w Window) NextChange(t time.Time) time.Time {
	now := w.Active(t)
	for next := t.Truncate(step).Add(step); next.Sub(t) <= horizon; next = next.Add(step) {
		if w.Active(next) != now {
			return next
		}
	}
	return time.Time{}
}

// Evaluate returns which of a pool's windows is in force at t, the last declared among
// those active (-1 when none is), and the next moment any of them opens or closes (zero
// when none ever does).
func Evaluate(ws []Window, t time.Time) (active int, next time.Time) {
	active = -1
	for i, w := range ws {
		if w.Active(t) {
			active = i
		}
		if change := w.NextChange(t); !change.IsZero() && (next.IsZero() || change.Before(next)) {
			next = change
		}
	}
	return active, next
}

// Package forecast is the arithmetic of learned warm pools: it records the nodes a
// pool's pending pods needed per zone and interval of the day into a NodePoolDemand's
// history, and forecasts from that history how many nodes an interval to come will need.
// It reads no clock and calls no API: callers pass the calendar's time.
package forecast

import (
	"fmt"
	"time"
)

// dateLayout is how NodePoolDemand writes days.
const dateLayout = "2006-01-02"

// Slot is one interval of one day, read on the wall clock of a time zone: index 0 begins
// at midnight. Reading the index from the wall clock keeps a daily peak at 09:00 in the
// same slot across daylight saving; on the day the clocks go back, the repeated hour's
// demand lands in the same slots twice, and on the day they go forward, the skipped
// hour's slots stay empty.
type Slot struct {
	// Date is the local day, YYYY-MM-DD.
	Date string
	// Index is the interval's number in the day.
	Index int32
	// Start and End bound the interval (End is the next interval's start).
	Start, End time.Time
}

// Clock is how a history cuts days into slots.
type Clock struct {
	// Interval divides a day (the API checks it).
	Interval time.Duration
	// Location is the time zone the days are read in.
	Location *time.Location
}

// SlotAt returns the slot that holds t.
func (c Clock) SlotAt(t time.Time) Slot {
	local := t.In(c.Location)
	y, m, d := local.Date()
	seconds := local.Hour()*3600 + local.Minute()*60 + local.Second()
	index := int32(seconds / int(c.Interval/time.Second))
	return c.slot(y, m, d, index)
}

// slot is the index'th slot of the day y-m-d.
func (c Clock) slot(y int, m time.Month, d int, index int32) Slot {
	step := int(c.Interval / time.Second)
	start := time.Date(y, m, d, 0, 0, int(index)*step, 0, c.Location)
	end := time.Date(y, m, d, 0, 0, int(index+1)*step, 0, c.Location)
	return Slot{Date: time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Format(dateLayout), Index: index, Start: start, End: end}
}

// Overlapping lists the slots that overlap [from, to), in order; a slot that begins
// exactly at to is left out.
func (c Clock) Overlapping(from, to time.Time) []Slot {
	var out []Slot
	for at := from; at.Before(to); {
		s := c.SlotAt(at)
		out = append(out, s)
		next := s.End
		if !next.After(at) {
			// Around a clock change the wall clock may name a slot whose end is not
			// later; stepping by the interval always moves on.
			next = at.Add(c.Interval)
		}
		at = next
	}
	return out
}

// NextStart is the start of the first slot that begins after t.
func (c Clock) NextStart(t time.Time) time.Time {
	if end := c.SlotAt(t).End; end.After(t) {
		return end
	}
	return t.Add(c.Interval)
}

// Bucket names a slot for people, such as "Tue 09:00-09:15 Europe/Berlin".
func (c Clock) Bucket(s Slot) string {
	return fmt.Sprintf("%s-%s %s", s.Start.In(c.Location).Format("Mon 15:04"), s.End.In(c.Location).Format("15:04"), c.Location.String())
}

// day parses a history's date as a day number: days since 1970-01-01.
func day(date string) (int, error) {
	t, err := time.Parse(dateLayout, date)
	if err != nil {
		return 0, err
	}
	return int(t.Unix() / 86400), nil
}

// dateOf is the date of a day number.
func dateOf(n int) string {
	return time.Unix(int64(n)*86400, 0).UTC().Format(dateLayout)
}

package forecast

import (
	"fmt"
	"slices"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Outlook is what the history says about the time ahead of now.
type Outlook struct {
	// Forecast is the largest forecast over the slots that overlap
	// [now, now + lead + interval]: the warm pool a peak in them needs, set up lead
	// ahead so that its nodes have warmed up when the peak begins.
	Forecast int32
	// Peak is the slot Forecast is for (the slot now is in when no slot needs a node),
	// and Bucket names it.
	Peak   Slot
	Bucket string
	// Days is how many days of history the peak's forecast drew on.
	Days int32
	// Running is how many nodes to run ahead of a peak: the largest confident forecast
	// over the slots that begin by now + preStart (and end after now). 0 without
	// preStart.
	Running int32
	// RunningFor is the slot Running is for, when Running is not 0.
	RunningFor Slot
	// Next is when the slots looked at next change, so the outlook should be read again.
	Next time.Time
}

// Look reads the history ahead of now. lead is the pool's warm-up duration on the
// calendar; preStart, when not nil, how long before a confident peak its nodes run.
func Look(h *v1beta1.NodePoolDemandSpec, s Settings, now time.Time, lead time.Duration, preStart *time.Duration) Outlook {
	horizon := lead + s.Interval
	out := Outlook{Peak: s.SlotAt(now), Next: s.NextStart(now)}
	// The slots in the window change when now leaves its slot or when the window's end
	// reaches the next slot's start.
	if at := s.NextStart(now.Add(horizon)).Add(-horizon); at.Before(out.Next) && at.After(now) {
		out.Next = at
	}
	// The ends are inclusive, so that the requeue at Next, when a window's end reaches
	// a slot's start, sees that slot.
	ahead := s.Overlapping(now, now.Add(horizon+time.Nanosecond))
	var running []Slot
	if preStart != nil {
		running = s.Overlapping(now, now.Add(*preStart+time.Nanosecond))
	}
	demand := index(h, append(slices.Clone(ahead), running...))
	first := true
	for _, slot := range ahead {
		est := forecast(demand, h.Since, s, slot)
		if first || est.Nodes > out.Forecast {
			out.Forecast, out.Peak, out.Days = est.Nodes, slot, est.Days
		}
		first = false
	}
	if preStart != nil {
		for _, slot := range running {
			if est := forecast(demand, h.Since, s, slot); est.Confident && est.Nodes > out.Running {
				out.Running, out.RunningFor = est.Nodes, slot
			}
		}
		if at := s.NextStart(now.Add(*preStart)).Add(-*preStart); at.Before(out.Next) && at.After(now) {
			out.Next = at
		}
	}
	out.Bucket = s.Bucket(out.Peak)
	return out
}

// Explain says, in words, where a forecast comes from.
func (o Outlook) Explain(s Settings) string {
	if o.Days == 0 {
		return fmt.Sprintf("no demand history before %s yet: the forecast is 0", o.Bucket)
	}
	msg := fmt.Sprintf("p%d of the nodes needed in %s over the last %d days (half-life %s, same weekday weighted x%d) is %d",
		s.Percentile, o.Bucket, o.Days, s.HalfLife, SameWeekdayWeight, o.Forecast)
	if o.Running > 0 {
		msg += fmt.Sprintf("; %d nodes run ahead of the peak, seen on at least %d of the last 7 days", o.Running, s.MinDays)
	}
	return msg
}

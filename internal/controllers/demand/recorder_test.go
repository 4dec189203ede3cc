package demand

import (
	"testing"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/forecast"
)

func settings(interval time.Duration) forecast.Settings {
	return forecast.Settings{Clock: forecast.Clock{Interval: interval, Location: time.UTC}, HalfLife: 168 * time.Hour}
}

// Counts add to what the API server holds; a history kept in another interval starts
// anew; days older than the history keeps go.
func TestApplyAddsToTheHistory(t *testing.T) {
	d := &v1beta1.NodePoolDemand{Spec: v1beta1.NodePoolDemandSpec{Interval: v1beta1.Duration{Duration: 15 * time.Minute}, TimeZone: "UTC", Since: "2026-10-01"}}
	forecast.Add(&d.Spec, forecast.Key{Date: "2026-10-01", Index: 36}, 9)
	forecast.Add(&d.Spec, forecast.Key{Date: "2026-11-23", Index: 36}, 2)
	p := &pending{settings: settings(15 * time.Minute), counts: map[forecast.Key]int32{{Date: "2026-11-23", Index: 36}: 3, {Date: "2026-11-24", Zone: "a", Index: 1}: 1}}
	apply(d, p)
	// 28 days up to 2026-11-24 begin on 2026-10-28: 2026-10-01 goes.
	if d.Spec.Since != "2026-10-28" || len(d.Spec.Days) != 2 || d.Spec.Days[0].Zones[0].Intervals[0].Nodes != 5 {
		t.Fatalf("history %+v: want since 2026-10-28, 5 nodes on 11-23, 1 on 11-24", d.Spec)
	}
	apply(d, &pending{settings: settings(time.Hour), counts: map[forecast.Key]int32{{Date: "2026-11-24", Index: 9}: 2}})
	if d.Spec.Interval.Duration != time.Hour || d.Spec.Since != "2026-11-24" || len(d.Spec.Days) != 1 || d.Spec.Days[0].Zones[0].Intervals[0] != (v1beta1.IntervalDemand{Index: 9, Nodes: 2}) {
		t.Fatalf("history %+v: want only the hour's 2 nodes", d.Spec)
	}
}

// Counts are written once their interval is over.
func TestEndedWhenTheCalendarLeftTheInterval(t *testing.T) {
	p := &pending{settings: settings(15 * time.Minute), counts: map[forecast.Key]int32{{Date: "2026-11-24", Index: 36}: 1}}
	if ended(p, time.Date(2026, 11, 24, 9, 14, 59, 0, time.UTC)) {
		t.Error("ended within 09:00-09:15")
	}
	if !ended(p, time.Date(2026, 11, 24, 9, 15, 0, 0, time.UTC)) {
		t.Error("not ended at 09:15")
	}
	if !ended(p, time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)) {
		t.Error("not ended a day later at the same time")
	}
}

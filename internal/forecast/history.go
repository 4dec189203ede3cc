package forecast

import (
	"slices"
	"strings"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Keeping bounds how many days of history are kept: four half-lives, at least four
// weeks, and no more than NodePoolDemand holds (120 days). A day four half-lives old
// weighs a sixteenth of yesterday; older ones barely move a percentile.
func Keeping(halfLife time.Duration) int {
	days := int((4*halfLife + 24*time.Hour - 1) / (24 * time.Hour))
	return min(max(days, 28), maxDays)
}

// maxDays is the most days a NodePoolDemand holds (its schema's MaxItems).
const maxDays = 120

// Key is where demand is counted: a day, a zone and an interval of the day.
type Key struct {
	Date  string
	Zone  string
	Index int32
}

// Add adds nodes to the history at key, keeping days, zones and intervals in order. A
// key before the history's start moves the start back: that day was recorded.
func Add(h *v1beta1.NodePoolDemandSpec, key Key, nodes int32) {
	if nodes <= 0 {
		return
	}
	if h.Since == "" || key.Date < h.Since {
		h.Since = key.Date
	}
	i, found := slices.BinarySearchFunc(h.Days, key.Date, func(d v1beta1.DemandDay, date string) int { return strings.Compare(d.Date, date) })
	if !found {
		h.Days = slices.Insert(h.Days, i, v1beta1.DemandDay{Date: key.Date, Zones: []v1beta1.ZoneDemand{}})
	}
	d := &h.Days[i]
	j, found := slices.BinarySearchFunc(d.Zones, key.Zone, func(z v1beta1.ZoneDemand, zone string) int { return strings.Compare(z.Zone, zone) })
	if !found {
		d.Zones = slices.Insert(d.Zones, j, v1beta1.ZoneDemand{Zone: key.Zone, Intervals: []v1beta1.IntervalDemand{}})
	}
	z := &d.Zones[j]
	k, found := slices.BinarySearchFunc(z.Intervals, key.Index, func(iv v1beta1.IntervalDemand, index int32) int { return int(iv.Index - index) })
	if !found {
		z.Intervals = slices.Insert(z.Intervals, k, v1beta1.IntervalDemand{Index: key.Index})
	}
	z.Intervals[k].Nodes += nodes
}

// Compact drops the days older than keep days before today, and moves the history's
// start to the oldest day kept. It reports whether it changed anything.
func Compact(h *v1beta1.NodePoolDemandSpec, today string, keep int) bool {
	now, err := day(today)
	if err != nil {
		return false
	}
	cutoff := dateOf(now - keep + 1)
	changed := false
	if h.Since != "" && h.Since < cutoff {
		h.Since, changed = cutoff, true
	}
	kept := slices.DeleteFunc(h.Days, func(d v1beta1.DemandDay) bool { return d.Date < cutoff })
	if len(kept) != len(h.Days) {
		changed = true
	}
	h.Days = kept
	return changed
}

// demandOf indexes a history: nodes by day number, zone and interval.
type demandOf map[int]map[string]map[int32]int32

// index indexes the history's intervals of the slots' indexes only: a pass reads a few
// slots of a history that may hold 120 days of 96 intervals in several zones.
func index(h *v1beta1.NodePoolDemandSpec, slots []Slot) demandOf {
	wanted := map[int32]bool{}
	for _, s := range slots {
		wanted[s.Index] = true
	}
	out := demandOf{}
	for _, d := range h.Days {
		n, err := day(d.Date)
		if err != nil {
			continue // the schema checks the pattern; a date that still fails is skipped
		}
		zones := map[string]map[int32]int32{}
		for _, z := range d.Zones {
			intervals := map[int32]int32{}
			for _, iv := range z.Intervals {
				if !wanted[iv.Index] {
					continue
				}
				intervals[iv.Index] += iv.Nodes
			}
			zones[z.Zone] = intervals
		}
		out[n] = zones
	}
	return out
}

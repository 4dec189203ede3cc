package forecast

import (
	"math"
	"slices"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// SameWeekdayWeight multiplies the weight of a past day that falls on the same day of
// the week as the day forecast: a Monday peak is told most by past Mondays, while the
// other days still count, so a daily peak is learned in a day rather than a week.
const SameWeekdayWeight = 2

// Settings are how a pool forecasts (spec.standby.learned, defaults applied).
type Settings struct {
	Clock
	// Percentile of the weighted demand taken, 50 to 100.
	Percentile int32
	// HalfLife decays the days: a day d days old weighs 0.5^(d/halfLife).
	HalfLife time.Duration
	// MinDays is how many of the last seven days must have seen demand in a slot for
	// its forecast to be confident.
	MinDays int32
}

// Estimate is the forecast of one slot.
type Estimate struct {
	// Nodes is the forecast: per zone, the weighted percentile of the nodes needed in
	// the slot on the days before it, summed over the zones.
	Nodes int32
	// Days is how many days of history the percentile drew on.
	Days int32
	// Confident is set when at least MinDays of the seven days before the slot's day
	// saw demand in the slot.
	Confident bool
}

// Forecast estimates the nodes a slot will need from the history: the days from the
// history's start (or the oldest day kept) to the day before the slot's, a day with no
// entry counting as no demand. Each day weighs 0.5^(age/halfLife), twice that on the
// slot's day of the week.
func Forecast(h *v1beta1.NodePoolDemandSpec, s Settings, slot Slot) Estimate {
	return forecast(index(h, []Slot{slot}), h.Since, s, slot)
}

func forecast(demand demandOf, since string, s Settings, slot Slot) Estimate {
	target, err := day(slot.Date)
	if err != nil || since == "" {
		return Estimate{}
	}
	first, err := day(since)
	if err != nil {
		return Estimate{}
	}
	first = max(first, target-Keeping(s.HalfLife))
	if first >= target {
		return Estimate{}
	}
	halfLifeDays := s.HalfLife.Hours() / 24
	weights := make([]float64, 0, target-first)
	days := make([]int, 0, target-first)
	zones := map[string]bool{}
	seen := 0
	for d := first; d < target; d++ {
		age := target - d
		w := math.Pow(0.5, float64(age)/halfLifeDays)
		if age%7 == 0 {
			w *= SameWeekdayWeight
		}
		days, weights = append(days, d), append(weights, w)
		total := int32(0)
		for zone, intervals := range demand[d] {
			if intervals[slot.Index] > 0 {
				zones[zone] = true
				total += intervals[slot.Index]
			}
		}
		if age <= 7 && total > 0 {
			seen++
		}
	}
	est := Estimate{Days: int32(len(days)), Confident: s.MinDays > 0 && int32(seen) >= s.MinDays}
	values := make([]int32, len(days))
	for zone := range zones {
		for i, d := range days {
			values[i] = demand[d][zone][slot.Index]
		}
		est.Nodes += WeightedPercentile(values, weights, s.Percentile)
	}
	return est
}

// WeightedPercentile is the smallest value whose weight, with that of the values below
// it, reaches percentile of the total weight: the lower weighted percentile, so that
// the value returned was seen. Percentile 100 is the largest value.
func WeightedPercentile(values []int32, weights []float64, percentile int32) int32 {
	order := make([]int, len(values))
	total := 0.0
	for i := range order {
		order[i] = i
		total += weights[i]
	}
	if total <= 0 {
		return 0
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(values[a] - values[b]) })
	// A relative tolerance keeps sums of halves and quarters from missing an exact
	// threshold by a rounding error.
	threshold := total * float64(percentile) / 100 * (1 - 1e-9)
	sum := 0.0
	for _, i := range order {
		sum += weights[i]
		if sum >= threshold {
			return values[i]
		}
	}
	return values[order[len(order)-1]]
}

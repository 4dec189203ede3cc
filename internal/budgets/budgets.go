// Package budgets reads a pool's disruption budgets: how many of its nodes may be
// disrupted at once, for which reasons, and when (a cron schedule in a time zone). It is
// pure, so that disruption, which obeys the budgets, and the pool controller, which
// reports budgets it cannot read, read them the same way.
package budgets

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/windows"
)

// Default applies when a pool sets none (the API server defaults it too).
var Default = v1beta1.Budget{Nodes: "10%"}

// Allowed is how many of a pool's nodes may be disrupted at once for reason at now: the
// smallest of the budgets active then that apply to the reason. A percentage is of
// total, the pool's nodes that run or are being disrupted, rounded up as Karpenter does,
// so that "10%" of a small pool still lets one node go. A budget that cannot be read (a
// cron expression or time zone the API server let through) allows nothing, so that a
// mistake never disrupts more than meant; the error says why. A schedule that never
// fires (such as "0 0 30 2 *") is never active: the budget never applies.
func Allowed(budgets []v1beta1.Budget, reason v1beta1.DisruptionReason, total int, now time.Time) (int, error) {
	if len(budgets) == 0 {
		budgets = []v1beta1.Budget{Default}
	}
	least := total
	for _, b := range budgets {
		if len(b.Reasons) > 0 && !slices.Contains(b.Reasons, reason) {
			continue
		}
		active, err := Active(b, now)
		if err != nil {
			return 0, err
		}
		if !active {
			continue
		}
		nodes := intstr.Parse(b.Nodes)
		n, err := intstr.GetScaledValueFromIntOrPercent(&nodes, total, true)
		if err != nil {
			return 0, fmt.Errorf("budget nodes %q: %w", b.Nodes, err)
		}
		least = min(least, n)
	}
	return max(least, 0), nil
}

// Active reports whether a budget applies at now: always without a schedule, else
// within duration of the schedule's latest time in its time zone; never when the
// schedule never fires.
func Active(b v1beta1.Budget, now time.Time) (bool, error) {
	if b.Schedule == nil {
		return true, nil
	}
	schedule, location, err := parse(b)
	if err != nil {
		return false, err
	}
	var duration time.Duration
	if b.Duration != nil {
		duration = b.Duration.Duration
	}
	// The schedule fired within (now-duration, now] exactly when its first time after
	// now-duration is not after now. The cron library answers the zero time for a
	// schedule with no time in the next five years: it never fires.
	next := schedule.Next(now.Add(-duration).In(location))
	return !next.IsZero() && !next.After(now), nil
}

// ErrNeverFires marks a budget whose schedule has no time at all, such as the 30th of
// February: the budget is never active.
var ErrNeverFires = errors.New("the schedule never fires, so the budget never applies")

// Check reports the budgets that do not do what they say: one that cannot be read or
// whose schedule never fires (ErrNeverFires). blocking is true when one cannot be read:
// then no node of the pool is disrupted at all (see Allowed). Nil when every budget is
// sound.
func Check(budgets []v1beta1.Budget, now time.Time) (blocking bool, err error) {
	var errs []error
	for i, b := range budgets {
		if b.Schedule == nil {
			continue
		}
		schedule, location, err := parse(b)
		if err != nil {
			errs = append(errs, fmt.Errorf("budget %d: %w; no node of the pool is disrupted until it is fixed", i, err))
			blocking = true
			continue
		}
		if schedule.Next(now.In(location)).IsZero() {
			errs = append(errs, fmt.Errorf("budget %d: schedule %q: %w", i, *b.Schedule, ErrNeverFires))
		}
	}
	return blocking, errors.Join(errs...)
}

// parse reads a budget's schedule and time zone.
func parse(b v1beta1.Budget) (cron.Schedule, *time.Location, error) {
	location := time.UTC
	if b.TimeZone != nil {
		loc, err := windows.Location(string(*b.TimeZone))
		if err != nil {
			return nil, nil, fmt.Errorf("budget time zone %q: %w", *b.TimeZone, err)
		}
		location = loc
	}
	schedule, err := cron.ParseStandard(*b.Schedule)
	if err != nil {
		return nil, nil, fmt.Errorf("budget schedule %q: %w", *b.Schedule, err)
	}
	return schedule, location, nil
}

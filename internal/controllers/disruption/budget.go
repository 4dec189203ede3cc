package disruption

import (
	"fmt"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/windows"
)

// budget is what a pool's budgets leave in one pass.
type budget struct {
	budgets           []v1alpha1.Budget
	total, disrupting int
	now               time.Time
	// err is set when a budget could not be read; nothing is disrupted then.
	err error
}

// left is how many more of the pool's nodes may be disrupted now for reason.
func (b *budget) left(reason v1alpha1.DisruptionReason) int {
	n, err := allowed(b.budgets, reason, b.total, b.now)
	if err != nil {
		b.err = err
		return 0
	}
	return n - b.disrupting
}

// take counts one more node being disrupted.
func (b *budget) take() { b.disrupting++ }

// defaultBudget applies when a pool sets none (the API server defaults it too).
var defaultBudget = v1alpha1.Budget{Nodes: "10%"}

// allowed is how many of a pool's nodes may be disrupted at once for reason at now: the
// smallest of the budgets active then that apply to the reason. A percentage is of
// total, the pool's nodes that run or are being disrupted, rounded up as Karpenter does,
// so that "10%" of a small pool still lets one node go. A budget that cannot be read (a
// cron expression or time zone the API server let through) allows nothing, so that a
// mistake never disrupts more than meant; the error says why.
func allowed(budgets []v1alpha1.Budget, reason v1alpha1.DisruptionReason, total int, now time.Time) (int, error) {
	if len(budgets) == 0 {
		budgets = []v1alpha1.Budget{defaultBudget}
	}
	least := total
	for _, b := range budgets {
		if len(b.Reasons) > 0 && !slices.Contains(b.Reasons, reason) {
			continue
		}
		active, err := activeAt(b, now)
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

// activeAt reports whether a budget applies at now: always without a schedule, else
// within duration of the schedule's latest time in its time zone.
func activeAt(b v1alpha1.Budget, now time.Time) (bool, error) {
	if b.Schedule == nil {
		return true, nil
	}
	location := time.UTC
	if b.TimeZone != nil {
		loc, err := windows.Location(string(*b.TimeZone))
		if err != nil {
			return false, fmt.Errorf("budget time zone %q: %w", *b.TimeZone, err)
		}
		location = loc
	}
	schedule, err := cron.ParseStandard(*b.Schedule)
	if err != nil {
		return false, fmt.Errorf("budget schedule %q: %w", *b.Schedule, err)
	}
	var duration time.Duration
	if b.Duration != nil {
		duration = b.Duration.Duration
	}
	// The schedule fired within (now-duration, now] exactly when its first time after
	// now-duration is not after now.
	next := schedule.Next(now.Add(-duration).In(location))
	return !next.After(now), nil
}

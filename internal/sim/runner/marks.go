package runner

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// moment is what a mark step remembers: when it ran, and how many claims had been
// started, taken and launched by then, so that a condition's since counts those that
// came after. The zero moment is the scenario's start.
type moment struct {
	at       time.Time
	capacity capacityCounts
}

// mark remembers this moment under name.
func (r *run) mark(name string) {
	now := moment{at: time.Now(), capacity: r.observer.counters()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.marks == nil {
		r.marks = map[string]moment{}
	}
	r.marks[name] = now
}

// markedMoments returns a copy of the moments marked so far.
func (r *run) markedMoments() map[string]moment {
	r.mu.Lock()
	defer r.mu.Unlock()
	marks := make(map[string]moment, len(r.marks))
	for name, m := range r.marks {
		marks[name] = m
	}
	return marks
}

// countName names a count of a condition as the reasons and descriptions show it, with
// the mark it counts from.
func countName(c *scenario.Condition, n scenario.NamedCount) string {
	if c.Since != "" && scenario.SinceApplies(n) {
		return n.Name + " since " + c.Since
	}
	return n.Name
}

// servedSince counts the pods created at or after since that ran, by how each was
// served, with the report's definitions (servingPath).
func servedSince(times []podTimes, since time.Time, registrations map[string][]nodeRegistration, starts map[string][]time.Time) map[report.Path]int {
	served := map[report.Path]int{}
	for _, t := range times {
		if t.created.Before(since) {
			continue
		}
		if path, ok := servingPath(t.created, t.running, registrations[t.nodeName], starts); ok {
			served[path]++
		}
	}
	return served
}

// buffersShowing counts the buffers, one or all, of one namespace or all, whose
// condition of want's type has want's status, with want's reason if it names one.
func buffersShowing(buffers []autoscalingv1beta1.CapacityBuffer, want *scenario.BufferConditionCount) int {
	return len(slices.DeleteFunc(slices.Clone(buffers), func(b autoscalingv1beta1.CapacityBuffer) bool {
		if (want.Buffer != "" && b.Name != want.Buffer) || (want.Namespace != "" && b.Namespace != want.Namespace) {
			return true
		}
		c := meta.FindStatusCondition(b.Status.Conditions, want.Type)
		return c == nil || c.Status != want.StatusOrDefault() || (want.Reason != "" && c.Reason != want.Reason)
	}))
}

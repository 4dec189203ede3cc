package runner

import (
	"context"
	"math"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/calendar"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// standbyByPool counts each pool's claims in phase Standby; every pool of the view is
// there, with 0 when it holds none.
func (v *view) standbyByPool() map[string]int {
	standby := make(map[string]int, len(v.pools))
	for i := range v.pools {
		standby[v.pools[i].Name] = 0
	}
	for k, n := range v.claims {
		if k.phase == string(v1beta1.PhaseStandby) && k.pool != "" {
			standby[k.pool] += n
		}
	}
	return standby
}

// standbyTarget is the standby target a pool reports in its status; 0 for a pool that
// is not there.
func (v *view) standbyTarget(pool string) int {
	for i := range v.pools {
		if v.pools[i].Name == pool {
			return int(v.pools[i].Status.StandbyTarget)
		}
	}
	return 0
}

// observeStandby charges the standby meter with a view's standby claims, now.
func (r *run) observeStandby(v *view) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.standby.Observe(time.Now(), v.standbyByPool())
}

// setClock sets the operator's calendar. The meter first sees the standby claims of
// the moment, which it holds across the jump.
func (r *run) setClock(ctx context.Context, to metav1.Time) error {
	v, err := look(ctx, r.client, r.observer)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.standby.Observe(now, v.standbyByPool())
	r.standby.SetCalendar(now, to.Time)
	return calendar.Write(r.calendarFile(), calendar.Setting{Time: to.Time, SetAt: now, Rate: r.scale})
}

// standbyHours is the report's standby figures so far.
func (r *run) standbyHours() map[string]report.StandbyHours {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.standby.Hours()
}

// workloadKey names a workload in the report, from the owner a pod was seen with
// (namespace/name): by its name in the default namespace, as scenarios name it.
func workloadKey(owner string) string {
	return strings.TrimPrefix(owner, metav1.NamespaceDefault+"/")
}

// workloadLatency is a percentile (100: the maximum) of the latencies of a workload's
// pods that run so far, in scenario seconds rounded up.
func (c costly) workloadLatency(want *scenario.WorkloadLatency) int {
	owner := namespaceOf(want.WorkloadRef) + "/" + want.Name
	var latencies []float64
	for _, t := range c.r.observer.podTimes() {
		if t.owner == owner && !t.running.IsZero() {
			latencies = append(latencies, t.running.Sub(t.created).Seconds()*c.r.scale)
		}
	}
	p := report.Percentiles(latencies)
	value := map[int]float64{50: p.P50, 90: p.P90, 99: p.P99, 100: p.Max}[want.Percentile]
	return int(math.Ceil(value))
}

// standbyNodeHours is a pool's standby node-hours so far, rounded up.
func (c costly) standbyNodeHours(pool string) int {
	return int(math.Ceil(c.r.standbyHours()[pool].NodeHours))
}

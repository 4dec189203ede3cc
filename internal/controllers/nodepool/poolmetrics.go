package nodepool

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/limits"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/repair"
)

// warmPool is what a pool's standby nodes add up to.
type warmPool struct {
	// byZone counts the claims standing by (phase Standby, not being deleted) by zone.
	byZone map[string]int
	// stopped is what they cost an hour now, running what they would cost running, in
	// dollars; priced is false when the instance types were not at hand to price them.
	stopped, running float64
	priced           bool
}

// standbyCensus counts the standby claims by zone and, when types is not nil, prices
// each by its offering: its stopped price (disks) and its price running. A claim whose
// offering the cloud no longer lists is counted but not priced.
func standbyCensus(claims []v1beta1.NodeClaim, types []*cloudprovider.InstanceType) warmPool {
	w := warmPool{byZone: map[string]int{}, priced: types != nil}
	offerings := map[cloudprovider.OfferingKey]cloudprovider.Offering{}
	for _, t := range types {
		for _, o := range t.Offerings {
			offerings[t.Key(o)] = o
		}
	}
	for i := range claims {
		c := &claims[i]
		if c.Status.Phase != v1beta1.PhaseStandby || !c.DeletionTimestamp.IsZero() {
			continue
		}
		w.byZone[c.Status.Zone]++
		if o, ok := offerings[cloudprovider.ClaimOffering(c)]; ok {
			w.stopped += o.StoppedPricePerHour
			w.running += o.PricePerHour
		}
	}
	return w
}

// Resources of stratos_nodepool_limit and stratos_nodepool_usage.
// limitSeries are a pool's limits and usage by resource, for each resource it limits,
// named as in limits: cpu in cores, memory in bytes, nvidia.com/gpu and other resources
// in their units, nodes as a count. The node limit is the cap in force, limits.nodes or
// the active window's maxNodes.
func limitSeries(l v1beta1.Limits, maxNodes *int32, used limits.Usage) map[string][2]float64 {
	out := map[string][2]float64{}
	if maxNodes != nil {
		out[string(v1beta1.LimitNodes)] = [2]float64{float64(*maxNodes), float64(used.Nodes)}
	}
	for name, limit := range l.Resources() {
		// AsApproximateFloat64 keeps fractions of a core; usage is an Amount, millicores for cpu.
		usage := limits.Quantity(name, used.Resources[name])
		out[string(name)] = [2]float64{limit.AsApproximateFloat64(), usage.AsApproximateFloat64()}
	}
	return out
}

// poolSeries remembers the zones each pool's standby gauge has a series for, so that a
// zone the pool no longer stands by in loses its series rather than showing its last
// count. Pools are reconciled concurrently.
type poolSeries struct {
	mu    sync.Mutex
	zones map[string]map[string]bool
	// limits are the resources each pool's limit and usage gauges have a series for:
	// any resource may be limited, so the ones a pool no longer limits are known only
	// from here.
	limits map[string]map[string]bool
	// degraded is the reason each pool's Degraded series has, so that a pool keeps one.
	degraded map[string]string
}

// recordPool publishes the pool's target, counts by phase, warm pool and limits.
func (r *Reconciler) recordPool(pool *v1beta1.NodePool, byPhase map[v1beta1.NodeClaimPhase]int32, warm warmPool, l map[string][2]float64) {
	metrics.PoolStandbyTarget.WithLabelValues(pool.Name).Set(float64(pool.Status.StandbyTarget))
	for _, phase := range v1beta1.Phases {
		metrics.PoolNodes.WithLabelValues(pool.Name, string(phase)).Set(float64(byPhase[phase]))
	}
	r.series.mu.Lock()
	if r.series.zones == nil {
		r.series.zones = map[string]map[string]bool{}
	}
	for zone := range r.series.zones[pool.Name] {
		if _, ok := warm.byZone[zone]; !ok {
			metrics.PoolStandbyNodes.DeleteLabelValues(pool.Name, zone)
		}
	}
	r.series.zones[pool.Name] = map[string]bool{}
	for zone, n := range warm.byZone {
		metrics.PoolStandbyNodes.WithLabelValues(pool.Name, zone).Set(float64(n))
		r.series.zones[pool.Name][zone] = true
	}
	r.recordDegraded(pool)
	r.series.mu.Unlock()
	switch {
	case warm.priced:
		metrics.PoolStandbyHourlyCost.WithLabelValues(pool.Name, "stopped").Set(warm.stopped)
		metrics.PoolStandbyHourlyCost.WithLabelValues(pool.Name, "running").Set(warm.running)
	case len(warm.byZone) == 0:
		// Nothing stands by: nothing to price, and it costs nothing.
		metrics.PoolStandbyHourlyCost.WithLabelValues(pool.Name, "stopped").Set(0)
		metrics.PoolStandbyHourlyCost.WithLabelValues(pool.Name, "running").Set(0)
	}
	r.recordLimits(pool.Name, l)
}

// recordLimits publishes a pool's limit and usage per resource it limits, and drops the
// series of the resources it no longer limits.
func (r *Reconciler) recordLimits(pool string, l map[string][2]float64) {
	r.series.mu.Lock()
	defer r.series.mu.Unlock()
	if r.series.limits == nil {
		r.series.limits = map[string]map[string]bool{}
	}
	for resource := range r.series.limits[pool] {
		if _, ok := l[resource]; !ok {
			metrics.PoolLimit.DeleteLabelValues(pool, resource)
			metrics.PoolUsage.DeleteLabelValues(pool, resource)
		}
	}
	r.series.limits[pool] = map[string]bool{}
	for resource, values := range l {
		metrics.PoolLimit.WithLabelValues(pool, resource).Set(values[0])
		metrics.PoolUsage.WithLabelValues(pool, resource).Set(values[1])
		r.series.limits[pool][resource] = true
	}
}

// recordDegraded publishes the pool's Degraded condition, the series of its former
// reason removed, so that an alert on the gauge sees the reason now and nothing stale.
// The caller holds r.series.mu.
func (r *Reconciler) recordDegraded(pool *v1beta1.NodePool) {
	if r.series.degraded == nil {
		r.series.degraded = map[string]string{}
	}
	d := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded)
	if former, ok := r.series.degraded[pool.Name]; ok && (d == nil || d.Reason != former) {
		metrics.PoolDegraded.DeleteLabelValues(pool.Name, former)
		delete(r.series.degraded, pool.Name)
	}
	if d == nil {
		return
	}
	value := 0.0
	if d.Status == metav1.ConditionTrue {
		value = 1
	}
	metrics.PoolDegraded.WithLabelValues(pool.Name, d.Reason).Set(value)
	r.series.degraded[pool.Name] = d.Reason
}

// recordUnhealthy publishes how many of the pool's running nodes are unhealthy, as node
// repair counts them: the figure its outage rule reads.
func recordUnhealthy(pool string, claims []v1beta1.NodeClaim) {
	_, unhealthy := repair.Count(claims)
	metrics.PoolUnhealthyNodes.WithLabelValues(pool).Set(float64(unhealthy))
}

// forgetPool drops every series of a pool that is gone.
func (r *Reconciler) forgetPool(name string) {
	labels := prometheus.Labels{"nodepool": name}
	for _, vec := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{metrics.PoolStandbyTarget, metrics.PoolNodes, metrics.PoolStandbyNodes, metrics.PoolStandbyHourlyCost, metrics.PoolLimit, metrics.PoolUsage, metrics.PoolWarmupFailures, metrics.PoolWarmupBackoff, metrics.PoolDegraded, metrics.PoolUnhealthyNodes,
		metrics.PoolDemandNodes, metrics.PoolForecastNodes, metrics.PoolLearnedStandbyTarget, metrics.PoolLearnedPreStartNodes} {
		vec.DeletePartialMatch(labels)
	}
	r.series.mu.Lock()
	delete(r.series.zones, name)
	delete(r.series.limits, name)
	delete(r.series.degraded, name)
	r.series.mu.Unlock()
	r.pacing.changed(name, "")
}

package nodepool

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/limits"
	"github.com/stratos-sh/stratos/internal/metrics"
)

func standbyIn(zone, typ, capacityType string) v1beta1.NodeClaim {
	return v1beta1.NodeClaim{Status: v1beta1.NodeClaimStatus{Phase: v1beta1.PhaseStandby, Zone: zone, InstanceType: typ, CapacityType: capacityType}}
}

// Standby claims count by zone and cost their offering's stopped price now against its
// price running; claims in other phases or being deleted are not standing by.
func TestTheWarmPoolCountsAndPricesItsStandbyNodes(t *testing.T) {
	types := []*cloudprovider.InstanceType{
		{Name: "m5.large", Offerings: []cloudprovider.Offering{
			{Zone: "a", CapacityType: "on-demand", PricePerHour: 0.096, StoppedPricePerHour: 0.002},
			{Zone: "b", CapacityType: "on-demand", PricePerHour: 0.097, StoppedPricePerHour: 0.003},
		}},
		{Name: "c5.large", Offerings: []cloudprovider.Offering{{Zone: "a", CapacityType: "on-demand", PricePerHour: 0.085, StoppedPricePerHour: 0.002}}},
	}
	deleting := standbyIn("a", "m5.large", "on-demand")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	running := standbyIn("a", "m5.large", "on-demand")
	running.Status.Phase = v1beta1.PhaseRunning
	claims := []v1beta1.NodeClaim{
		standbyIn("a", "m5.large", "on-demand"), standbyIn("b", "m5.large", "on-demand"), standbyIn("a", "c5.large", "on-demand"),
		standbyIn("a", "gone.large", "on-demand"), // no longer listed: counted, not priced
		deleting, running,
	}
	w := standbyCensus(claims, types)
	if w.byZone["a"] != 3 || w.byZone["b"] != 1 || len(w.byZone) != 2 {
		t.Fatalf("by zone %v, want a=3 b=1", w.byZone)
	}
	if !w.priced || math.Abs(w.stopped-0.007) > 1e-12 || math.Abs(w.running-(0.096+0.097+0.085)) > 1e-12 {
		t.Fatalf("priced %v: stopped $%.4f, running $%.4f; want $0.0070 and $0.2780", w.priced, w.stopped, w.running)
	}
	if unpriced := standbyCensus(claims, nil); unpriced.priced || unpriced.byZone["a"] != 3 {
		t.Fatalf("without types: %+v, want counted and not priced", unpriced)
	}
}

// Each resource a pool limits has a limit and a usage, in cores, bytes, GPUs and nodes;
// resources it does not limit have none.
func TestLimitSeriesAreTheResourcesThePoolLimits(t *testing.T) {
	used := limits.Usage{Nodes: 3, Resources: map[corev1.ResourceName]int64{corev1.ResourceCPU: 6500, corev1.ResourceMemory: 24 << 30, "nvidia.com/gpu": 2}}
	cpu := resource.MustParse("16")
	got := limitSeries(v1beta1.Limits{corev1.ResourceCPU: cpu}, ptr.To(int32(10)), used)
	want := map[string][2]float64{"cpu": {16, 6.5}, "nodes": {10, 3}}
	if len(got) != len(want) || got["cpu"] != want["cpu"] || got["nodes"] != want["nodes"] {
		t.Fatalf("series %v, want %v", got, want)
	}
	memory := resource.MustParse("64Gi")
	got = limitSeries(v1beta1.Limits{corev1.ResourceMemory: memory}, nil, used)
	if len(got) != 1 || got["memory"] != [2]float64{64 << 30, 24 << 30} {
		t.Fatalf("series %v, want memory only", got)
	}
	got = limitSeries(v1beta1.Limits{"nvidia.com/gpu": resource.MustParse("4")}, nil, used)
	if len(got) != 1 || got["nvidia.com/gpu"] != [2]float64{4, 2} {
		t.Fatalf("series %v, want nvidia.com/gpu only, 2 of 4", got)
	}
	if got := limitSeries(nil, nil, used); len(got) != 0 {
		t.Fatalf("an unlimited pool has series %v", got)
	}
}

// A zone the pool no longer stands by in, a limit removed, and a pool gone lose their
// series.
func TestSeriesOfWhatWentAwayAreDeleted(t *testing.T) {
	r := &Reconciler{}
	pool := &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "series-test"}}
	r.recordPool(pool, nil, warmPool{byZone: map[string]int{"a": 2, "b": 1}}, map[string][2]float64{"cpu": {16, 4}})
	if got := testutil.ToFloat64(metrics.PoolStandbyNodes.WithLabelValues("series-test", "b")); got != 1 {
		t.Fatalf("zone b: %v standby, want 1", got)
	}
	// A limit on a GPU replaces the one on cpu: the cpu series go, the GPU's come.
	r.recordPool(pool, nil, warmPool{byZone: map[string]int{"a": 2, "b": 1}}, map[string][2]float64{"nvidia.com/gpu": {4, 1}})
	if n := seriesOf(t, "stratos_nodepool_limit", "series-test"); n != 1 ||
		testutil.ToFloat64(metrics.PoolLimit.WithLabelValues("series-test", "nvidia.com/gpu")) != 4 {
		t.Fatalf("after the cpu limit gave way to a GPU one: %d limit series, want the GPU's only", n)
	}
	r.recordPool(pool, nil, warmPool{byZone: map[string]int{"a": 2}}, nil)
	for _, m := range []struct {
		name string
		n    int
	}{{"stratos_nodepool_standby_nodes", 1}, {"stratos_nodepool_limit", 0}, {"stratos_nodepool_usage", 0}} {
		if n := seriesOf(t, m.name, "series-test"); n != m.n {
			t.Errorf("%s: %d series of the pool, want %d", m.name, n, m.n)
		}
	}
	r.forgetPool("series-test")
	for _, name := range []string{"stratos_nodepool_standby_nodes", "stratos_nodepool_nodes", "stratos_nodepool_standby_target", "stratos_nodepool_standby_hourly_cost_dollars"} {
		if n := seriesOf(t, name, "series-test"); n != 0 {
			t.Errorf("%s: %d series left of a pool gone", name, n)
		}
	}
}

func seriesOf(t *testing.T, name, pool string) int {
	t.Helper()
	n := 0
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "nodepool" && l.GetValue() == pool {
					n++
				}
			}
		}
	}
	return n
}

// A pool's Degraded gauge has one series, with the condition's reason now: 1 while
// True, 0 once False, and none once the pool is gone.
func TestDegradedSeriesFollowsTheCondition(t *testing.T) {
	r := &Reconciler{}
	pool := &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "degraded-test"}}
	set := func(status metav1.ConditionStatus, reason string) {
		pool.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionDegraded, Status: status, Reason: reason}}
		r.recordPool(pool, nil, warmPool{}, nil)
	}
	set(metav1.ConditionTrue, ReasonLimitReached)
	if got := testutil.ToFloat64(metrics.PoolDegraded.WithLabelValues("degraded-test", ReasonLimitReached)); got != 1 {
		t.Fatalf("Degraded LimitReached: %v, want 1", got)
	}
	set(metav1.ConditionFalse, ReasonAsExpected)
	if n := seriesOf(t, "stratos_nodepool_degraded", "degraded-test"); n != 1 {
		t.Fatalf("%d series after the reason changed, want 1", n)
	}
	if got := testutil.ToFloat64(metrics.PoolDegraded.WithLabelValues("degraded-test", ReasonAsExpected)); got != 0 {
		t.Fatalf("Degraded False: %v, want 0", got)
	}
	r.forgetPool("degraded-test")
	if n := seriesOf(t, "stratos_nodepool_degraded", "degraded-test"); n != 0 {
		t.Fatalf("%d series of a pool gone", n)
	}
}

package warmpool_test

import (
	"fmt"
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// gauge is the value of a gauge's series, and whether it has one.
func gauge(t *testing.T, name string, labels map[string]string) (float64, bool) {
	m := stack.Metric(t, name, labels)
	return m.GetGauge().GetValue(), m != nil
}

// A pool's warm pool and limits show as gauges that match its claims: standby nodes by
// zone, their cost stopped (one 20 GiB gp3 volume each, $0.08 per GiB-month over 730
// hours) and running (their offerings' prices in the fake catalogue), and usage
// against each limit. When the pool is deleted, its series go.
func TestWarmPoolAndLimitGaugesFollowThePoolsClaims(t *testing.T) {
	f := newFixture(t, nil)
	pool := f.Pool("gauges", 3, func(p *v1beta1.NodePool) {
		p.Spec.Limits = v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("5"), corev1.ResourceCPU: resource.MustParse("100")}
	})
	claims := f.WaitForPhase("gauges", 3, v1beta1.PhaseStandby)

	prices := map[string]float64{}
	for _, it := range fakecloud.DefaultCatalog() {
		for _, o := range it.Offerings {
			prices[fmt.Sprintf("%s/%s/%s", it.Name, o.Zone, o.CapacityType)] = o.PricePerHour
		}
	}
	byZone := map[string]float64{}
	var running, cpus float64
	for _, c := range claims {
		byZone[c.Status.Zone]++
		price, ok := prices[fmt.Sprintf("%s/%s/%s", c.Status.InstanceType, c.Status.Zone, c.Status.CapacityType)]
		if !ok {
			t.Fatalf("claim %s's offering is not in the catalogue", c.Name)
		}
		running += price
		cpus += c.Status.Capacity.Cpu().AsApproximateFloat64()
	}
	stopped := 3 * 20 * 0.08 / 730
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	want := func() string {
		for zone, n := range byZone {
			if got, _ := gauge(t, "stratos_nodepool_standby_nodes", map[string]string{"nodepool": "gauges", "zone": zone}); got != n {
				return fmt.Sprintf("zone %s: %v standby, want %v", zone, got, n)
			}
		}
		checks := []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"stratos_nodepool_standby_hourly_cost_dollars", map[string]string{"state": "stopped"}, stopped},
			{"stratos_nodepool_standby_hourly_cost_dollars", map[string]string{"state": "running"}, running},
			{"stratos_nodepool_limit", map[string]string{"resource": "nodes"}, 5},
			{"stratos_nodepool_usage", map[string]string{"resource": "nodes"}, 3},
			{"stratos_nodepool_limit", map[string]string{"resource": "cpu"}, 100},
			{"stratos_nodepool_usage", map[string]string{"resource": "cpu"}, cpus},
		}
		for _, c := range checks {
			c.labels["nodepool"] = "gauges"
			if got, ok := gauge(t, c.name, c.labels); !ok || !near(got, c.want) {
				return fmt.Sprintf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
			}
		}
		if _, ok := gauge(t, "stratos_nodepool_limit", map[string]string{"nodepool": "gauges", "resource": "memory"}); ok {
			return "a memory limit series for a pool without one"
		}
		return ""
	}
	var last string
	f.Eventually("the gauges match the claims", func() bool { last = want(); return last == "" })
	if last != "" {
		t.Fatal(last)
	}

	if err := f.Env.Client.Delete(f.Ctx, pool); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the deleted pool's series are gone", func() bool {
		for _, name := range []string{"stratos_nodepool_standby_nodes", "stratos_nodepool_standby_hourly_cost_dollars", "stratos_nodepool_limit", "stratos_nodepool_usage", "stratos_nodepool_nodes"} {
			if stack.Metric(t, name, map[string]string{"nodepool": "gauges"}) != nil {
				return false
			}
		}
		return true
	})
}

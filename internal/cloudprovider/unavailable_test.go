package cloudprovider

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/internal/metrics"
)

var epoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// Each test marks offerings of its own instance type, as the metrics are global.
func key(instanceType, zone, capacityType string) OfferingKey {
	return OfferingKey{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}
}

// gaugeSeries returns the value of the unavailable-offerings gauge for key, and whether
// the series exists; asking WithLabelValues would create it.
func gaugeSeries(t *testing.T, k OfferingKey) (float64, bool) {
	t.Helper()
	ch := make(chan prometheus.Metric, 1000)
	metrics.UnavailableOfferings.Collect(ch)
	close(ch)
	want := map[string]string{"instance_type": k.InstanceType, "zone": k.Zone, "capacity_type": k.CapacityType}
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		matches := 0
		for _, l := range pb.GetLabel() {
			if want[l.GetName()] == l.GetValue() {
				matches++
			}
		}
		if matches == len(want) {
			return pb.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func wantGauge(t *testing.T, k OfferingKey, present bool) {
	t.Helper()
	value, ok := gaugeSeries(t, k)
	switch {
	case present && (!ok || value != 1):
		t.Errorf("gauge of %s = %v (present %v), want 1", k, value, ok)
	case !present && ok:
		t.Errorf("gauge of %s is still served (%v) after its mark expired", k, value)
	}
}

func marksCounted(k OfferingKey) float64 {
	return testutil.ToFloat64(metrics.OfferingsMarkedUnavailable.WithLabelValues(k.InstanceType, k.Zone, k.CapacityType))
}

func TestAMarkLastsTheTTLThenGoesWithItsGauge(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	u := NewUnavailableOfferings(3*time.Minute, clk)
	marked, other := key("ttl.large", "z-a", "spot"), key("ttl.large", "z-b", "spot")
	if u.IsUnavailable(marked) || len(u.List()) != 0 {
		t.Fatal("a new cache has marks")
	}

	u.Mark(marked, "Create: InsufficientCapacity")
	if !u.IsUnavailable(marked) || u.IsUnavailable(other) {
		t.Fatalf("after marking %s: %s unavailable %v, %s unavailable %v", marked, marked, u.IsUnavailable(marked), other, u.IsUnavailable(other))
	}
	wantGauge(t, marked, true)
	wantGauge(t, other, false)
	if got := marksCounted(marked); got != 1 {
		t.Errorf("marks counted = %v, want 1", got)
	}

	clk.Step(3*time.Minute - time.Nanosecond)
	if !u.IsUnavailable(marked) {
		t.Fatal("the mark expired before its TTL")
	}
	wantGauge(t, marked, true)

	clk.Step(time.Nanosecond)
	if u.IsUnavailable(marked) {
		t.Fatal("the mark outlived its TTL")
	}
	if list := u.List(); len(list) != 0 {
		t.Fatalf("List after expiry = %v", list)
	}
	wantGauge(t, marked, false)
}

func TestMarkingAgainExtendsTheMark(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	u := NewUnavailableOfferings(time.Minute, clk)
	k := key("again.large", "z-a", "on-demand")
	u.Mark(k, "Create: InsufficientCapacity")
	clk.Step(40 * time.Second)
	u.Mark(k, "Start: InsufficientCapacity")

	clk.Step(40 * time.Second)
	if !u.IsUnavailable(k) {
		t.Fatal("the second mark did not extend the first")
	}
	list := u.List()
	if len(list) != 1 || list[0].Reason != "Start: InsufficientCapacity" || !list[0].Expires.Equal(epoch.Add(100*time.Second)) {
		t.Fatalf("List = %+v, want the second mark, expiring at %s", list, epoch.Add(100*time.Second))
	}
	wantGauge(t, k, true)
	if got := marksCounted(k); got != 2 {
		t.Errorf("marks counted = %v, want 2", got)
	}

	clk.Step(20 * time.Second)
	if u.IsUnavailable(k) || len(u.List()) != 0 {
		t.Fatal("the extended mark outlived its TTL")
	}
	wantGauge(t, k, false)
}

// Without any read, the mark's timer takes its series out of the gauge when it expires.
func TestTheGaugeForgetsAnExpiredMarkWithoutARead(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	u := NewUnavailableOfferings(time.Minute, clk)
	swept := make(chan struct{}, 1)
	u.swept = func() { swept <- struct{}{} }
	k := key("timer.large", "z-a", "spot")
	u.Mark(k, "Start: InsufficientCapacity")
	wantGauge(t, k, true)

	clk.Step(time.Minute)
	select {
	case <-swept:
	case <-time.After(10 * time.Second):
		t.Fatal("the mark's timer did not sweep")
	}
	wantGauge(t, k, false)
}

func TestListIsOrderedByKey(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	u := NewUnavailableOfferings(0, clk)
	for _, k := range []OfferingKey{key("order.xlarge", "z-a", "spot"), key("order.large", "z-b", "spot"), key("order.large", "z-a", "spot"), key("order.large", "z-a", "on-demand")} {
		u.Mark(k, "test")
	}
	want := []OfferingKey{key("order.large", "z-a", "on-demand"), key("order.large", "z-a", "spot"), key("order.large", "z-b", "spot"), key("order.xlarge", "z-a", "spot")}
	got := u.Keys()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Keys = %v, want %v", got, want)
	}
	for _, mark := range u.List() {
		if !mark.Expires.Equal(epoch.Add(DefaultUnavailableOfferingTTL)) {
			t.Errorf("%s expires at %s; a TTL of 0 means the default %s", mark.OfferingKey, mark.Expires, DefaultUnavailableOfferingTTL)
		}
	}
}

func TestOverlayCopiesTheTypesItChanges(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	u := NewUnavailableOfferings(time.Minute, clk)
	small := &InstanceType{Name: "overlay.large", Offerings: []Offering{
		{Zone: "z-a", CapacityType: "spot", Available: true},
		{Zone: "z-b", CapacityType: "spot", Available: true},
	}}
	big := &InstanceType{Name: "overlay.xlarge", Offerings: []Offering{{Zone: "z-a", CapacityType: "spot", Available: true}}}
	types := []*InstanceType{small, big}
	if got := u.Overlay(types); got[0] != small || got[1] != big {
		t.Fatal("with no marks, Overlay changed the types")
	}

	u.Mark(key("overlay.large", "z-a", "spot"), "test")
	got := u.Overlay(types)
	if got[0] == small || got[0].Offerings[0].Available || !got[0].Offerings[1].Available {
		t.Errorf("overlay.large offerings = %+v, want a copy with z-a unavailable", got[0].Offerings)
	}
	if got[1] != big {
		t.Error("overlay.xlarge, which has no mark, was copied")
	}
	if !small.Offerings[0].Available {
		t.Error("Overlay changed the cloud's answer")
	}

	clk.Step(time.Minute)
	if got := u.Overlay(types); !got[0].Offerings[0].Available {
		t.Error("the offering stays unavailable after its mark expired")
	}
}

// Run with -race: marks, reads and expiries from many goroutines.
func TestConcurrentUse(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	u := NewUnavailableOfferings(time.Second, clk)
	var wg sync.WaitGroup
	for n := range 8 {
		wg.Go(func() {
			for i := range 100 {
				k := key("race.large", fmt.Sprintf("z-%d", i%4), "spot")
				switch n % 4 {
				case 0:
					u.Mark(k, "test")
				case 1:
					u.IsUnavailable(k)
				case 2:
					u.List()
				default:
					clk.Step(100 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
}

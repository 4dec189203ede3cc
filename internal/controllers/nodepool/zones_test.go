package nodepool

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

func TestNewStandbyClaimsGoToTheZonesWithFewest(t *testing.T) {
	zones := standbyZones{"zone-a": 0.2, "zone-b": 0.2, "zone-c": 0.1}
	// zone-a has three, zone-b one, zone-c none: each new claim goes where fewest are,
	// the cheaper zone-c first among equals, until all three have four.
	got := spreadNew(6, map[string]int{"zone-a": 3, "zone-b": 1}, zones)
	want := []string{"zone-c", "zone-c", "zone-b", "zone-c", "zone-b", "zone-c"}
	if !slices.Equal(got, want) {
		t.Fatalf("zones %v, want %v", got, want)
	}
	// A zone with no offering that can stand by (out of capacity, say) gets none; the
	// others make up for it.
	got = spreadNew(4, map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}, standbyZones{"zone-b": 0.2, "zone-c": 0.2})
	if want := []string{"zone-b", "zone-c", "zone-b", "zone-c"}; !slices.Equal(got, want) {
		t.Fatalf("zones %v, want %v", got, want)
	}
	if got := spreadNew(2, nil, standbyZones{}); got != nil {
		t.Fatalf("zones %v without any zone", got)
	}
}

func TestRemovalsTakeFromTheFullestZoneOldestFirst(t *testing.T) {
	at := func(name, zone string, minute int) member {
		return member{name: name, standby: true, zone: zone, created: epoch.Add(time.Duration(minute) * time.Minute)}
	}
	members := []member{at("a1", "zone-a", 0), at("b1", "zone-b", 1), at("a2", "zone-a", 2), at("a3", "zone-a", 3), at("b2", "zone-b", 4), at("c1", "zone-c", 5)}
	var names []string
	for _, m := range fullestFirst(members, 4) {
		names = append(names, m.name)
	}
	// zone-a (3) gives its oldest; then zone-a and zone-b have two each and the older
	// (a2 is younger than b1) goes; and so on.
	if want := []string{"a1", "b1", "a2", "a3"}; !slices.Equal(names, want) {
		t.Fatalf("removed %v, want %v", names, want)
	}
	if got := fullestFirst(members, 0); got != nil {
		t.Fatalf("removed %v of none", got)
	}
}

func TestAnExcessOfStandbyNodesLeavesTheWarmPoolBalanced(t *testing.T) {
	members := []member{
		{name: "a1", standby: true, ready: true, zone: "zone-a", created: epoch},
		{name: "a2", standby: true, ready: true, zone: "zone-a", created: epoch.Add(time.Minute)},
		{name: "a3", standby: true, ready: true, zone: "zone-a", created: epoch.Add(2 * time.Minute)},
		{name: "b1", standby: true, ready: true, zone: "zone-b", created: epoch.Add(3 * time.Minute)},
	}
	p := planStandby(2, 2, members, nil, nil)
	if want := []string{"a1", "a2"}; !slices.Equal(p.remove, want) {
		t.Fatalf("removed %v, want %v", p.remove, want)
	}
}

func TestStandbyZonesAreThoseOfOfferingsThatCanStandBy(t *testing.T) {
	offering := func(zone, capacityType string, price float64, available bool) cloudprovider.Offering {
		return cloudprovider.Offering{Zone: zone, CapacityType: capacityType, PricePerHour: price, Available: available}
	}
	small := &cloudprovider.InstanceType{Name: "small", Architecture: "amd64", Capacity: size("2", "4Gi"), Offerings: []cloudprovider.Offering{
		offering("zone-a", v1beta1.CapacityTypeOnDemand, 0.1, true),
		offering("zone-b", v1beta1.CapacityTypeOnDemand, 0.1, false), // out of capacity
		offering("zone-c", v1beta1.CapacityTypeSpot, 0.03, true),     // spot cannot stand by
	}}
	large := &cloudprovider.InstanceType{Name: "large", Architecture: "amd64", Capacity: size("8", "32Gi"), Offerings: []cloudprovider.Offering{
		offering("zone-a", v1beta1.CapacityTypeOnDemand, 0.4, true),
		offering("zone-b", v1beta1.CapacityTypeOnDemand, 0.4, true),
	}}
	pool := &v1beta1.NodePool{}
	zones, err := zonesForStandby(pool, []*cloudprovider.InstanceType{small, large})
	if err != nil || len(zones) != 2 || zones["zone-a"] != 0.1 || zones["zone-b"] != 0.4 {
		t.Fatalf("zones %v (%v), want zone-a at 0.1 and zone-b at 0.4", zones, err)
	}
	// A shape only the large type holds, and a requirement on zone-b.
	pool.Spec.Standby.Resources = size("4", "8Gi")
	pool.Spec.Standby.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-b"}}}
	if zones, err := zonesForStandby(pool, []*cloudprovider.InstanceType{small, large}); err != nil || len(zones) != 1 || zones["zone-b"] != 0.4 {
		t.Fatalf("zones %v (%v), want zone-b only", zones, err)
	}
	// A pool that allows only spot keeps no warm pool, and says why.
	pool = &v1beta1.NodePool{}
	pool.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeSpot}}}
	if zones, err := zonesForStandby(pool, []*cloudprovider.InstanceType{small, large}); err != nil || len(zones) != 0 {
		t.Fatalf("zones %v (%v) for a spot-only pool", zones, err)
	}
	if msg := noStandbyMessage(pool); !strings.Contains(msg, "spot is for cold launches only") {
		t.Fatalf("message %q", msg)
	}
}

// A floor (minValues) on the instance family keeps standby nodes out of the zones where
// too few families can stand by, and the message says so.
func TestStandbyZonesKeepThePoolsFloors(t *testing.T) {
	typeOf := func(name string, zones ...string) *cloudprovider.InstanceType {
		it := &cloudprovider.InstanceType{Name: name, Architecture: "amd64", Capacity: size("2", "8Gi"),
			Attributes: cloudprovider.InstanceFacts{Name: name, VCPUs: 2, MemoryMiB: 8192}.Attributes()}
		for _, z := range zones {
			it.Offerings = append(it.Offerings, cloudprovider.Offering{Zone: z, CapacityType: v1beta1.CapacityTypeOnDemand, PricePerHour: 0.1, Available: true})
		}
		return it
	}
	types := []*cloudprovider.InstanceType{typeOf("m5.large", "zone-a", "zone-b"), typeOf("c5.large", "zone-a"), typeOf("r5.large", "zone-a", "zone-b")}
	two := int32(2)
	pool := &v1beta1.NodePool{}
	pool.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: v1beta1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpExists, MinValues: &two}}
	if zones, err := zonesForStandby(pool, types); err != nil || len(zones) != 2 {
		t.Fatalf("zones %v (%v), want zone-a and zone-b: both have two families", zones, err)
	}
	// The warm pool's own requirements leave zone-b with r5 only.
	pool.Spec.Standby.Requirements = []v1beta1.NodeSelectorRequirement{{Key: v1beta1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"m5"}}}
	if zones, err := zonesForStandby(pool, types); err != nil || len(zones) != 1 || zones["zone-a"] == 0 {
		t.Fatalf("zones %v (%v), want zone-a only", zones, err)
	}
	pool.Spec.Standby.Requirements = []v1beta1.NodeSelectorRequirement{{Key: v1beta1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"c5"}}}
	if zones, err := zonesForStandby(pool, types); err != nil || len(zones) != 0 {
		t.Fatalf("zones %v (%v), want none: one family can stand by", zones, err)
	}
	if msg := noStandbyMessage(pool); !strings.Contains(msg, "among types of at least 2 values of stratos.sh/instance-family (minValues)") {
		t.Fatalf("message %q", msg)
	}
}

// Standby nodes that cannot start (their zone is out of capacity) are made up in the
// other zones and kept; once they can start again, the excess above the ceiling goes
// from the zones that made up for them.
func TestHeldStandbyNodesAreMadeUpElsewhereThenTrimmed(t *testing.T) {
	var members []member
	for i, zone := range []string{"a", "a", "a", "a", "b", "b", "b", "b", "c", "c", "c", "c"} {
		members = append(members, member{name: zone + string(rune('0'+i)), standby: true, ready: true, zone: zone, held: zone == "a", created: epoch.Add(time.Duration(i) * time.Minute)})
	}
	p := planStandby(12, 12, members, nil, nil)
	if p.create != 4 || len(p.remove) != 0 {
		t.Fatalf("with zone a held: create %d, remove %v; want 4 made up elsewhere and none removed", p.create, p.remove)
	}
	// The four made up went to b and c; zone a can start again.
	for i, zone := range []string{"b", "b", "c", "c"} {
		members = append(members, member{name: "new-" + zone + string(rune('0'+i)), standby: true, ready: true, zone: zone, created: epoch.Add(time.Hour + time.Duration(i)*time.Minute)})
	}
	for i := range members {
		members[i].held = false
	}
	p = planStandby(12, 12, members, nil, nil)
	counts := map[string]int{}
	for _, m := range members {
		if !slices.Contains(p.remove, m.name) {
			counts[m.zone]++
		}
	}
	if len(p.remove) != 4 || counts["a"] != 4 || counts["b"] != 4 || counts["c"] != 4 {
		t.Fatalf("removed %v, leaving %v; want four per zone", p.remove, counts)
	}
}

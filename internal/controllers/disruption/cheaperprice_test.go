package disruption

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

const (
	onDemand = v1beta1.CapacityTypeOnDemand
	spot     = v1beta1.CapacityTypeSpot
)

// A node is replaced only for a saving worth a disruption: an on-demand node by any
// cheaper spot node (the pool going back to spot), otherwise by a node at least 10%
// cheaper; never by one that costs the same or more, never spot by spot whatever the
// price, never on unknown prices.
func TestWorthReplacing(t *testing.T) {
	tests := []struct {
		name          string
		current, next offer
		want          bool
	}{
		{"on-demand by spot at a third", offer{0.096, onDemand}, offer{0.032, spot}, true},
		{"on-demand by spot a cent cheaper", offer{0.096, onDemand}, offer{0.095, spot}, true},
		{"on-demand by spot at the same price", offer{0.096, onDemand}, offer{0.096, spot}, false},
		{"on-demand by dearer spot", offer{0.096, onDemand}, offer{0.1, spot}, false},
		{"on-demand by on-demand 29% cheaper", offer{0.096, onDemand}, offer{0.068, onDemand}, true},
		{"on-demand by on-demand exactly 10% cheaper", offer{0.1, onDemand}, offer{0.09, onDemand}, true},
		{"on-demand by on-demand 5% cheaper", offer{0.1, onDemand}, offer{0.095, onDemand}, false},
		{"on-demand by the same on-demand", offer{0.096, onDemand}, offer{0.096, onDemand}, false},
		{"spot by spot of about the same price", offer{0.0336, spot}, offer{0.0317, spot}, false},
		{"spot by spot at the same price", offer{0.0336, spot}, offer{0.0336, spot}, false},
		{"spot by spot at half the price", offer{0.0672, spot}, offer{0.0336, spot}, false},
		{"spot by dearer on-demand", offer{0.0336, spot}, offer{0.096, onDemand}, false},
		{"spot by on-demand 5% cheaper", offer{0.1, spot}, offer{0.095, onDemand}, false},
		{"spot by on-demand 20% cheaper", offer{0.1, spot}, offer{0.08, onDemand}, true},
		{"unknown current price", offer{0, onDemand}, offer{0.03, spot}, false},
		{"unknown next price", offer{0.096, onDemand}, offer{0, spot}, false},
	}
	for _, tt := range tests {
		if got := worthReplacing(tt.current, tt.next); got != tt.want {
			t.Errorf("%s: worthReplacing(%v, %v) = %v, want %v", tt.name, tt.current, tt.next, got, tt.want)
		}
	}
}

// offering is an available offering of a type in a zone.
func offering(zone, capacityType string, price float64) cloudprovider.Offering {
	return cloudprovider.Offering{Zone: zone, CapacityType: capacityType, PricePerHour: price, Available: true}
}

// A launch the simulation chose keeps only what is worth the replacement: the capacity
// type of its cheapest available offering, and the types whose every offering of it in
// the launch's zones is worth it. A replacement meant to be spot cannot come up
// on-demand, nor as a spot type dearer than the node it replaces.
func TestCheaperLaunchKeepsWhatIsWorthIt(t *testing.T) {
	current := offer{0.096, onDemand} // an on-demand m5.large
	types := []*cloudprovider.InstanceType{
		{Name: "c6g.large", Offerings: []cloudprovider.Offering{offering("a", onDemand, 0.068), offering("a", spot, 0.024), offering("b", spot, 0.027)}},
		{Name: "m5.large", Offerings: []cloudprovider.Offering{offering("a", onDemand, 0.096), offering("a", spot, 0.035), offering("b", spot, 0.038)}},
		// Its spot offering in zone b costs more than the node replaced.
		{Name: "m5.xlarge", Offerings: []cloudprovider.Offering{offering("a", onDemand, 0.192), offering("a", spot, 0.07), offering("b", spot, 0.1)}},
	}
	l := scheduling.Launch{Pool: "web", InstanceTypes: []string{"c6g.large", "m5.large", "m5.xlarge"}, PricePerHour: 0.024}
	got, next, ok := cheaperLaunch(l, types, current)
	if !ok {
		t.Fatal("a spot launch at a quarter of the node's price was not worth it")
	}
	if next != (offer{0.024, spot}) || got.PricePerHour != 0.024 {
		t.Errorf("the replacement costs %v (launch %v), want spot at 0.024", next, got.PricePerHour)
	}
	if !slices.Equal(got.CapacityTypes, []string{spot}) {
		t.Errorf("capacity types %v, want spot alone", got.CapacityTypes)
	}
	if !slices.Equal(got.InstanceTypes, []string{"c6g.large", "m5.large"}) {
		t.Errorf("instance types %v, want c6g.large and m5.large (m5.xlarge's spot in b costs more than the node)", got.InstanceTypes)
	}

	// Spot refused (the offerings marked unavailable): the on-demand c6g.large is 29%
	// cheaper than the on-demand m5.large, and that is all the launch may be.
	for _, it := range types {
		for i := range it.Offerings {
			if it.Offerings[i].CapacityType == spot {
				it.Offerings[i].Available = false
			}
		}
	}
	got, next, ok = cheaperLaunch(l, types, current)
	if !ok || next != (offer{0.068, onDemand}) || !slices.Equal(got.InstanceTypes, []string{"c6g.large"}) || !slices.Equal(got.CapacityTypes, []string{onDemand}) {
		t.Errorf("with spot unavailable: %v, %v, %v; want the on-demand c6g.large alone at 0.068", got, next, ok)
	}
	// The node is that on-demand c6g.large already: nothing is worth it.
	if _, _, ok := cheaperLaunch(l, types, offer{0.068, onDemand}); ok {
		t.Error("an on-demand node was replaced by the same on-demand offering")
	}
}

// A launch whose pods narrowed its zones or capacity types keeps them: offerings outside
// them are neither the cheapest nor a reason to drop a type.
func TestCheaperLaunchStaysWithinWhatThePodsAsked(t *testing.T) {
	types := []*cloudprovider.InstanceType{
		{Name: "m5.large", Offerings: []cloudprovider.Offering{offering("a", onDemand, 0.096), offering("a", spot, 0.035), offering("b", spot, 0.5)}},
	}
	l := scheduling.Launch{Pool: "web", InstanceTypes: []string{"m5.large"}, Zones: []string{"a"}, CapacityTypes: []string{onDemand}}
	if _, _, ok := cheaperLaunch(l, types, offer{0.096, onDemand}); ok {
		t.Error("a launch held to on-demand replaced an on-demand node of the same price")
	}
	l.CapacityTypes = nil
	got, next, ok := cheaperLaunch(l, types, offer{0.096, onDemand})
	if !ok || next != (offer{0.035, spot}) || !slices.Equal(got.Zones, []string{"a"}) {
		t.Errorf("a launch held to zone a: %v, %v, %v; want spot in a at 0.035", got, next, ok)
	}
}

// A node's price is its instance's offering: type, zone and capacity type.
func TestOfferOfIsTheClaimsOffering(t *testing.T) {
	types := []*cloudprovider.InstanceType{
		{Name: "m5.large", Offerings: []cloudprovider.Offering{offering("a", onDemand, 0.096), offering("a", spot, 0.035), offering("b", onDemand, 0.097)}},
	}
	claim := &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1beta1.NodeClaimStatus{InstanceType: "m5.large", Zone: "b", CapacityType: onDemand}}
	if got, ok := offerOf(types, claim); !ok || got != (offer{0.097, onDemand}) {
		t.Errorf("offerOf = %v, %v; want on-demand at 0.097", got, ok)
	}
	claim.Status.InstanceType = "r5.large"
	if _, ok := offerOf(types, claim); ok {
		t.Error("a type the catalogue does not list has a price")
	}
}

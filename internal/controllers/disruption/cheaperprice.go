package disruption

import (
	"slices"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

// cheaperMargin is how much less a replacement must cost, as a share of the node's
// price, to be worth moving pods for: a disruption for a few cents an hour is not, and
// two offerings whose prices cross back and forth within it never trade places.
const cheaperMargin = 0.10

// offer is what a node costs, or a replacement would: its offering's hourly price and
// capacity type.
type offer struct {
	price        float64
	capacityType string
}

// worthReplacing reports whether a node bought as current is worth replacing with one
// bought as next. An on-demand node is replaced by any cheaper spot node: that is the
// pool going back to the spot capacity it asked for once spot is offered again (its
// on-demand nodes came from the warm pool, or from a launch while spot was refused). A
// spot node is never replaced by another spot node, as Karpenter does not by default:
// EC2 places spot by price and capacity, the cheapest spot pools are often the most
// interrupted, and moving pods for a few cents between spot pools trades their
// stability for little. Otherwise next must cost at least cheaperMargin less. Unknown
// prices (zero) never are worth it.
func worthReplacing(current, next offer) bool {
	if current.price <= 0 || next.price <= 0 || next.price >= current.price {
		return false
	}
	switch {
	case current.capacityType == v1beta1.CapacityTypeOnDemand && next.capacityType == v1beta1.CapacityTypeSpot:
		return true
	case current.capacityType == v1beta1.CapacityTypeSpot && next.capacityType == v1beta1.CapacityTypeSpot:
		return false
	}
	return next.price <= current.price*(1-cheaperMargin)
}

// offerOf is what a claim's node costs: the price, in types, of its instance's
// offering (type, zone and capacity type). False when types do not list it.
func offerOf(types []*cloudprovider.InstanceType, claim *v1beta1.NodeClaim) (offer, bool) {
	for _, it := range types {
		if it.Name != claim.Status.InstanceType {
			continue
		}
		for _, o := range it.Offerings {
			if o.Zone == claim.Status.Zone && o.CapacityType == claim.Status.CapacityType {
				return offer{price: o.PricePerHour, capacityType: o.CapacityType}, true
			}
		}
	}
	return offer{}, false
}

// cheaperLaunch narrows a launch the simulation chose for a node's pods to the
// offerings worth replacing the node with, and returns it with its cheapest offering.
// The cloud may buy any type, zone and capacity type a claim lists, and falls back from
// the cheapest when it has no capacity: so the claim keeps the capacity type of the
// cheapest available offering alone (a replacement meant to be spot never comes up
// on-demand), and only the types whose every available offering of it, in the launch's
// zones, is worth the replacement. False when nothing is worth it. types are the
// launch's pool's instance types with their offerings' availability.
func cheaperLaunch(l scheduling.Launch, types []*cloudprovider.InstanceType, current offer) (scheduling.Launch, offer, bool) {
	byName := make(map[string]*cloudprovider.InstanceType, len(types))
	for _, it := range types {
		byName[it.Name] = it
	}
	inZones := func(o cloudprovider.Offering) bool { return len(l.Zones) == 0 || slices.Contains(l.Zones, o.Zone) }
	var cheapest offer
	for _, name := range l.InstanceTypes {
		for _, o := range offeringsOf(byName[name]) {
			if o.Available && inZones(o) && (len(l.CapacityTypes) == 0 || slices.Contains(l.CapacityTypes, o.CapacityType)) &&
				(cheapest.price == 0 || o.PricePerHour < cheapest.price) {
				cheapest = offer{price: o.PricePerHour, capacityType: o.CapacityType}
			}
		}
	}
	if !worthReplacing(current, cheapest) {
		return l, offer{}, false
	}
	narrowed := l
	narrowed.InstanceTypes, narrowed.CapacityTypes, narrowed.PricePerHour = nil, []string{cheapest.capacityType}, 0
	for _, name := range l.InstanceTypes {
		lowest, allWorth := 0.0, true
		for _, o := range offeringsOf(byName[name]) {
			if !o.Available || !inZones(o) || o.CapacityType != cheapest.capacityType {
				continue
			}
			allWorth = allWorth && worthReplacing(current, offer{price: o.PricePerHour, capacityType: o.CapacityType})
			if lowest == 0 || o.PricePerHour < lowest {
				lowest = o.PricePerHour
			}
		}
		if lowest == 0 || !allWorth {
			continue
		}
		narrowed.InstanceTypes = append(narrowed.InstanceTypes, name)
		if narrowed.PricePerHour == 0 || lowest < narrowed.PricePerHour {
			narrowed.PricePerHour = lowest
		}
	}
	if len(narrowed.InstanceTypes) == 0 {
		return l, offer{}, false
	}
	return narrowed, offer{price: narrowed.PricePerHour, capacityType: cheapest.capacityType}, true
}

// offeringsOf is a type's offerings; none for a type not known.
func offeringsOf(it *cloudprovider.InstanceType) []cloudprovider.Offering {
	if it == nil {
		return nil
	}
	return it.Offerings
}

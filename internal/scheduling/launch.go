package scheduling

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// maxLaunchTypes bounds the instance types a launch may fall back to when the cheapest
// has no capacity; a pool's minValues floors may keep more.
const maxLaunchTypes = 10

// launch describes a new claim: the types that hold its pods, cheapest first, and the
// zones and capacity types when the pods narrowed them.
func (s *solver) launch(b *bin, pods []*corev1.Pod) Launch {
	ps := b.pool
	types, zones, capacityTypes := s.claimable(b)
	l := Launch{Pool: ps.name, Pods: pods, Requests: toList(b.used)}
	// A claim may become any of its types: one larger than the type its capacity was
	// reserved for (under the pool's limits) is kept only while the limits leave room.
	// The types that meet the pool's floors stay whatever the count: their capacity was
	// reserved (floors.go).
	var floorKeeps []int
	if len(ps.floors) > 0 {
		floorKeeps, _ = ps.floorTypes(types)
	}
	// extra is, per limited resource, the most any kept type grows the claim by.
	extra := map[corev1.ResourceName]int64{}
	for _, t := range types {
		kept := slices.Contains(floorKeeps, t.index)
		if len(l.InstanceTypes) >= maxLaunchTypes && !kept {
			if len(floorKeeps) == 0 {
				break
			}
			continue
		}
		capacity := &ps.types[t.index].capacity
		if !kept && !ps.limitsAllow(capacity, &b.reserved) {
			continue
		}
		if len(l.InstanceTypes) == 0 {
			l.PricePerHour = t.price
		}
		l.InstanceTypes = append(l.InstanceTypes, ps.types[t.index].name)
		for _, name := range ps.limited {
			extra[name] = max(extra[name], capacity.get(name)-b.reserved.get(name))
		}
	}
	for name, v := range extra {
		ps.left[name] -= v
	}
	// Narrowed zones and capacity types go into the claim; the pool's full set need not.
	poolZones, poolTypes := map[int]bool{}, map[string]bool{}
	for _, o := range ps.offerings {
		poolZones[o.zone], poolTypes[o.ct] = true, true
	}
	if len(zones) < len(poolZones) {
		for z := range zones {
			l.Zones = append(l.Zones, s.topo.zones[z])
		}
		slices.Sort(l.Zones)
	}
	if len(capacityTypes) < len(poolTypes) {
		for ct := range capacityTypes {
			l.CapacityTypes = append(l.CapacityTypes, ct)
		}
		slices.Sort(l.CapacityTypes)
	}
	return l
}

// pricedType is an instance type of a pool with the price of its cheapest offering.
type pricedType struct {
	index int
	price float64
}

// claimable turns a new claim's offerings into what a claim can ask for: instance types,
// zones and capacity types, of which the cloud may buy any combination. So every
// offering of a type it lists, in a zone and capacity type it lists, must be one of the
// bin's offerings: one left out (by a node selector, or by a spread count that settled
// the claim) must not come back. The cheapest offering stays; the capacity types, then
// the zones, then both narrow to its own when the types allowed otherwise leave it out.
func (s *solver) claimable(b *bin) ([]pricedType, map[int]bool, map[string]bool) {
	ps := b.pool
	best := ps.offerings[cheapest(ps, b.offers)]
	allZones, allTypes := map[int]bool{}, map[string]bool{}
	b.offers.each(func(i int) { allZones[ps.offerings[i].zone], allTypes[ps.offerings[i].ct] = true, true })
	for _, try := range []struct {
		zones map[int]bool
		cts   map[string]bool
	}{
		{allZones, allTypes},
		{allZones, map[string]bool{best.ct: true}},
		{map[int]bool{best.zone: true}, allTypes},
		{map[int]bool{best.zone: true}, map[string]bool{best.ct: true}},
	} {
		types := s.typesWithin(b, try.zones, try.cts)
		if slices.ContainsFunc(types, func(t pricedType) bool { return t.index == best.typ }) {
			return types, try.zones, try.cts
		}
	}
	// Only when the pool lists one type in one zone and capacity type twice.
	return []pricedType{{index: best.typ, price: best.price}}, map[int]bool{best.zone: true}, map[string]bool{best.ct: true}
}

// typesWithin returns, cheapest first, the types of the bin whose every offering in
// zones and capacity types is one of the bin's.
func (s *solver) typesWithin(b *bin, zones map[int]bool, cts map[string]bool) []pricedType {
	ps := b.pool
	var out []pricedType
	for t, it := range ps.types {
		price, found, whole := 0.0, false, true
		for i := it.first; i < it.last && whole; i++ {
			o := ps.offerings[i]
			if !zones[o.zone] || !cts[o.ct] {
				continue
			}
			if whole = b.offers.has(i); whole && (!found || o.price < price) {
				price, found = o.price, true
			}
		}
		if found && whole {
			out = append(out, pricedType{index: t, price: price})
		}
	}
	slices.SortFunc(out, func(a, c pricedType) int {
		return cmp.Or(cmp.Compare(a.price, c.price), cmp.Compare(ps.types[a.index].name, ps.types[c.index].name))
	})
	return out
}

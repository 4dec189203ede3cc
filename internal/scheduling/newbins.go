package scheduling

import "math"

// open makes a new claim of pool ps for p, if the pool's limits and p's predicates allow.
func (s *solver) open(p *podInfo, ps *poolState, soft bool) bool {
	if ps.nodesLeft == 0 || len(ps.offerings) == 0 || !ps.toleratedBy(p) {
		return false
	}
	b := &bin{
		kind: newBin, pool: ps, offers: ps.all.clone(),
		counts:   make([]int32, len(s.topo.groups)),
		antiHost: make([]int32, len(s.topo.groups)),
	}
	b.zones = b.offeringZones()
	b.refreshBound()
	b.ceiling = s.ceilingFor(p, ps)
	if !s.tryNew(p, b, soft) {
		return false
	}
	if ps.nodesLeft > 0 {
		ps.nodesLeft--
	}
	s.bins = append(s.bins, b)
	return true
}

// tryNew adds p to a new claim if some offering left can hold everything on it.
func (s *solver) tryNew(p *podInfo, b *bin, soft bool) bool {
	total := b.used.plus(&p.requests)
	if !total.fits(&b.bound) || (b.ceiling != nil && !total.fits(b.ceiling)) || !b.pool.toleratedBy(p) || !b.hostPortsFree(p.ports) {
		return false
	}
	allowed := b.pool.placeableFor(p)
	if !b.offers.intersects(allowed) {
		return false
	}
	zones := b.zones
	if p.hasTopology() {
		var ok bool
		if zones, ok = s.allowedZones(p, b, soft); !ok {
			return false
		}
	}
	// The offerings whose type holds everything; then those p accepts.
	grown := b.offers.clone()
	for _, t := range b.pool.types {
		if !total.fits(&t.allocatable) {
			grown.clearRange(t.first, t.last)
		}
	}
	if counts := b.attachedWith(p); len(counts) > 0 {
		b.pool.clearTypesOverAttachLimits(grown, counts)
	}
	candidates := grown.clone()
	candidates.and(allowed)
	if zones != b.zones {
		s.keepZones(b.pool, candidates, zones)
	}
	if candidates.empty() || (soft && !s.worthJoining(p, b, grown, candidates)) {
		return false
	}
	if p.needsZone {
		s.keepZones(b.pool, candidates, zoneBit(s.chooseZone(p, b.pool, candidates)))
		if candidates.empty() {
			return false // no offering has a zone the pod could count in
		}
	}
	var floorCapacity *resources
	if len(b.pool.floors) > 0 {
		capacity, ok := s.floorCapacity(b.pool, candidates)
		if !ok {
			return false // the pod would leave the claim too few types to choose among
		}
		floorCapacity = &capacity
	}
	if !s.reserve(b, candidates, floorCapacity) {
		return false
	}
	b.offers, b.used = candidates, total
	b.zones = b.offeringZones()
	b.refreshBound()
	s.commit(p, b, singleZone(b.zones))
	return true
}

// keepZones drops from candidates the offerings outside the zones of mask.
func (s *solver) keepZones(ps *poolState, candidates bitset, mask uint64) {
	keep := newBitset(len(ps.offerings))
	for z, m := range ps.zoneMask {
		if mask&zoneBit(z) != 0 {
			for i := range keep {
				keep[i] |= m[i]
			}
		}
	}
	candidates.and(keep)
}

// chooseZone picks the zone for a pod whose zone matters: the one where its spread
// groups hold the fewest pods, then the one with the cheapest offering.
func (s *solver) chooseZone(p *podInfo, ps *poolState, candidates bitset) int {
	best, bestCount, bestPrice := -1, int32(math.MaxInt32), math.Inf(1)
	for z, m := range ps.zoneMask {
		if !candidates.intersects(m) {
			continue
		}
		var count int32
		for _, terms := range [][]term{p.hard, p.soft} {
			for _, tm := range terms {
				if tm.kind == spread && tm.zonal {
					count += s.topo.groups[tm.group].zone[z]
				}
			}
		}
		price := math.Inf(1)
		inZone := candidates.clone()
		inZone.and(m)
		inZone.each(func(i int) { price = min(price, ps.offerings[i].price) })
		if count < bestCount || (count == bestCount && price < bestPrice) {
			best, bestCount, bestPrice = z, count, price
		}
	}
	return best
}

// cheapest returns the index of the cheapest offering in set, or -1.
func cheapest(ps *poolState, set bitset) int {
	best := -1
	set.each(func(i int) {
		if best < 0 || ps.offerings[i].price < ps.offerings[best].price {
			best = i
		}
	})
	return best
}

// reserve holds the capacity of the bin's cheapest offering (or floor, the largest the
// pool's floors keep, when larger) against the pool's limits on resources, taking only
// the growth since the bin's last reservation.
func (s *solver) reserve(b *bin, candidates bitset, floor *resources) bool {
	ps := b.pool
	if len(ps.limited) == 0 {
		return true
	}
	capacity := ps.types[ps.offerings[cheapest(ps, candidates)].typ].capacity
	if floor != nil {
		capacity.max(floor)
	}
	if !ps.limitsAllow(&capacity, &b.reserved) {
		return false
	}
	ps.spend(&capacity, &b.reserved)
	b.reserved = capacity
	return true
}

package scheduling

import "slices"

// spreadCounts returns, for a zone spread term of p, the pods the term matches per zone
// as kube-scheduler counts them: only those on nodes p could be scheduled to by its node
// affinity (and by its taints, when the term says so). A new claim whose offerings lie
// on both sides of that line is settled first, to the side of its cheapest offering, so
// that the count holds whichever of its offerings the claim becomes. A claim that
// neither side leaves enough types for its pool's minValues floors stays unsettled: its
// pods count in high and not in low, the most and the fewest the zone may have. The
// counts are worked out once per placement of p: they change only when a pod is placed.
func (s *solver) spreadCounts(p *podInfo, tm term) (low, high []int32) {
	g := s.topo.groups[tm.group]
	if (p.affinityKey == "" || !tm.honorAffinity) && !tm.honorTaints {
		return g.zone, g.zone
	}
	if c, ok := s.counting[tm.group]; ok {
		return c[0], c[1]
	}
	low = make([]int32, len(s.topo.zones))
	for _, b := range s.bins {
		z, n := singleZone(b.zones), b.counts[tm.group]
		if z < 0 || n == 0 {
			continue
		}
		switch s.eligibleBin(p, tm, b) {
		case counted:
			low[z] += n
			if high != nil {
				high[z] += n
			}
		case uncertain:
			if high == nil {
				high = slices.Clone(low)
			}
			high[z] += n
		}
	}
	if high == nil {
		high = low
	}
	s.counting[tm.group] = [2][]int32{low, high}
	return low, high
}

// eligibility says whether a spread term counts the pods of a bin.
type eligibility int

const (
	notCounted eligibility = iota
	counted
	// uncertain: a new claim that may become a node either side of the line.
	uncertain
)

// eligibleBin tells whether bin b is a node p's spread term counts the pods of,
// settling a new claim that could still go either way.
func (s *solver) eligibleBin(p *podInfo, tm term, b *bin) eligibility {
	if b.kind != newBin {
		return countedIf((!tm.honorAffinity || b.nodeAffinityOK(p)) && (!tm.honorTaints || tolerates(p.pod.Spec.Tolerations, b.taints)))
	}
	if tm.honorTaints && !b.pool.toleratedBy(p) {
		return notCounted
	}
	if !tm.honorAffinity {
		return counted
	}
	allowed := b.pool.allowedFor(p)
	if b.offers.within(allowed) {
		return counted
	}
	if !b.offers.intersects(allowed) {
		return notCounted
	}
	// Keeping the cheapest offering keeps the capacity held against the pool's limits.
	eligible := allowed.has(cheapest(b.pool, b.offers))
	if len(b.pool.floors) == 0 {
		if eligible {
			b.offers.and(allowed)
		} else {
			b.offers.andNot(allowed)
		}
		b.refreshBound()
		return countedIf(eligible)
	}
	for _, side := range []bool{eligible, !eligible} {
		narrowed := b.offers.clone()
		if side {
			narrowed.and(allowed)
		} else {
			narrowed.andNot(allowed)
		}
		if s.settleKeepingFloors(b, narrowed) {
			return countedIf(side)
		}
	}
	return uncertain
}

func countedIf(ok bool) eligibility {
	if ok {
		return counted
	}
	return notCounted
}

// settleKeepingFloors narrows a new claim of a pool with minValues floors to offerings
// set if its types still meet the floors, holding against the pool's limits what the
// narrowed claim may become; it reports whether it did.
func (s *solver) settleKeepingFloors(b *bin, set bitset) bool {
	capacity, ok := s.floorCapacity(b.pool, set)
	if !ok || !s.reserve(b, set, &capacity) {
		return false
	}
	copy(b.offers, set)
	b.refreshBound()
	return true
}

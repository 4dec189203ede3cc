package scheduling

import "slices"

// allowedZones applies p's topology spread and pod (anti-)affinity to bin b: it returns
// the zones of b where p may go, or false when p may not go on b at all. Soft terms count
// as hard when soft is set.
func (s *solver) allowedZones(p *podInfo, b *bin, soft bool) (uint64, bool) {
	mask := b.zones
	ok := s.applyTerms(p, b, p.hard, &mask, soft)
	if ok && soft {
		ok = s.applyTerms(p, b, p.soft, &mask, soft)
	}
	if !ok {
		return 0, false
	}
	// Pods already placed keep matching pods out of their domain (symmetric anti-affinity).
	for _, g := range p.matches {
		if b.antiHost[g] > 0 {
			return 0, false
		}
		anti := s.topo.groups[g].antiZone
		mask = s.zonesWhere(mask, func(z int) bool { return anti[z] == 0 })
	}
	return mask, mask != 0 || b.zones == 0
}

// applyTerms narrows mask to the zones each term allows, and reports false when a term
// rules the bin out. soft asks for the soft part of a hard term too.
func (s *solver) applyTerms(p *podInfo, b *bin, terms []term, mask *uint64, soft bool) bool {
	for _, tm := range terms {
		g := s.topo.groups[tm.group]
		var self int32
		if slices.Contains(p.matches, tm.group) {
			self = 1
		}
		if !tm.zonal {
			here := b.counts[tm.group]
			switch tm.kind {
			case spread:
				// A new node, with none, is always possible: the emptiest domain has 0.
				if here+self > tm.maxSkew {
					return false
				}
			case affinity:
				// The first pod of a group that selects itself may go anywhere; softly,
				// where the rest of the group fits too, as they can only follow it.
				first := g.total == 0 && self == 1
				if (here == 0 && !first) || (first && soft && !s.roomForGroup(tm.group, b)) {
					return false
				}
			case antiAffinity:
				if here > 0 {
					return false
				}
			}
			continue
		}
		switch tm.kind {
		case spread:
			// The skew must hold whichever way the claims not settled go: at most high
			// here, at least low in the emptiest zone.
			low, high := s.spreadCounts(p, tm)
			least := s.fewest(low, s.eligible(p))
			*mask = s.zonesWhere(*mask, func(z int) bool { return high[z]+self-least <= tm.maxSkew })
		case affinity:
			if !(g.total == 0 && self == 1) {
				*mask = s.zonesWhere(*mask, func(z int) bool { return g.zone[z] > 0 })
			}
		case antiAffinity:
			*mask = s.zonesWhere(*mask, func(z int) bool { return g.zone[z] == 0 })
		}
		if *mask == 0 {
			return false
		}
	}
	return true
}

// pending returns the requests of the pending pods of group g.
func (s *solver) pending(g int) resources {
	need, ok := s.pendingOf[g]
	if !ok {
		for _, p := range s.pods {
			if slices.Contains(p.matches, g) {
				need.add(&p.requests)
			}
		}
		s.pendingOf[g] = need
	}
	return need
}

// needs is what p's node must hold for p: p, or, when p is the first of a group that
// wants to share a node, the whole group.
func (s *solver) needs(p *podInfo) resources {
	need := p.requests
	for _, tm := range p.hard {
		if tm.kind == affinity && !tm.zonal && s.topo.groups[tm.group].total == 0 && slices.Contains(p.matches, tm.group) {
			group := s.pending(tm.group)
			need.max(&group)
		}
	}
	return need
}

// roomForGroup reports whether bin b has room for every pending pod of group g.
func (s *solver) roomForGroup(g int, b *bin) bool {
	need := s.pending(g)
	if b.kind != newBin {
		return need.fits(&b.free)
	}
	// A new claim must have a type that holds them all, within its ceiling and the
	// pool's limits.
	total := b.used.plus(&need)
	if b.ceiling != nil && !total.fits(b.ceiling) {
		return false
	}
	ps := b.pool
	for _, t := range ps.types {
		if total.fits(&t.allocatable) && b.offers.intersectsRange(t.first, t.last) && ps.limitsAllow(&t.capacity, &b.reserved) {
			return true
		}
	}
	return false
}

// zonesWhere keeps the zones of mask for which keep holds.
func (s *solver) zonesWhere(mask uint64, keep func(int) bool) uint64 {
	for z := range s.topo.zones {
		if mask&zoneBit(z) != 0 && !keep(z) {
			mask &^= zoneBit(z)
		}
	}
	return mask
}

// fewest is the smallest of counts among the zones of mask.
func (s *solver) fewest(counts []int32, mask uint64) int32 {
	least := int32(-1)
	for z := range s.topo.zones {
		if mask&zoneBit(z) != 0 && (least < 0 || counts[z] < least) {
			least = counts[z]
		}
	}
	return max(least, 0)
}

// eligible returns the zones p could go to at all: those of the nodes and claims its
// node affinity accepts, and of the pools' offerings it accepts. They are the domains
// its zone spread counts.
func (s *solver) eligible(p *podInfo) uint64 {
	if mask, ok := s.eligibleZones[p.affinityKey]; ok {
		return mask
	}
	var mask uint64
	for _, b := range s.bins {
		if b.kind != newBin && b.nodeAffinityOK(p) {
			mask |= b.zones
		}
	}
	for _, ps := range s.pools {
		allowed := ps.allowedFor(p)
		for z, m := range ps.zoneMask {
			if allowed.intersects(m) {
				mask |= zoneBit(z)
			}
		}
	}
	s.eligibleZones[p.affinityKey] = mask
	return mask
}

package scheduling

// spreadCounts returns, for a zone spread term of p, the pods the term matches per zone
// as kube-scheduler counts them: only those on nodes p could be scheduled to by its node
// affinity (and by its taints, when the term says so). A new claim whose offerings lie
// on both sides of that line is settled first, to the side of its cheapest offering, so
// that the count holds whichever of its offerings the claim becomes. The counts are
// worked out once per placement of p: they change only when a pod is placed.
func (s *solver) spreadCounts(p *podInfo, tm term) []int32 {
	g := s.topo.groups[tm.group]
	if (p.affinityKey == "" || !tm.honorAffinity) && !tm.honorTaints {
		return g.zone
	}
	if c, ok := s.counting[tm.group]; ok {
		return c
	}
	counts := make([]int32, len(s.topo.zones))
	for _, b := range s.bins {
		z, n := singleZone(b.zones), b.counts[tm.group]
		if z >= 0 && n > 0 && s.eligibleBin(p, tm, b) {
			counts[z] += n
		}
	}
	s.counting[tm.group] = counts
	return counts
}

// eligibleBin reports whether bin b is a node p's spread term counts the pods of,
// settling a new claim that could still go either way.
func (s *solver) eligibleBin(p *podInfo, tm term, b *bin) bool {
	if b.kind != newBin {
		return (!tm.honorAffinity || b.nodeAffinityOK(p)) && (!tm.honorTaints || tolerates(p.pod.Spec.Tolerations, b.taints))
	}
	if tm.honorTaints && !b.pool.toleratedBy(p) {
		return false
	}
	if !tm.honorAffinity {
		return true
	}
	allowed := b.pool.allowedFor(p)
	if b.offers.within(allowed) {
		return true
	}
	if !b.offers.intersects(allowed) {
		return false
	}
	// Keeping the cheapest offering keeps the capacity held against the pool's limits.
	eligible := allowed.has(cheapest(b.pool, b.offers))
	if eligible {
		b.offers.and(allowed)
	} else {
		b.offers.andNot(allowed)
	}
	b.refreshBound()
	return eligible
}

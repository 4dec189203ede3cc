package scheduling

// A new claim first-fit fills up to the largest type would end, full, on whatever large
// type holds it: seldom the one that sells capacity cheapest, since prices per vCPU and
// per GiB differ by family, architecture, zone and capacity type. So a claim grows only
// up to the type whose nodes would carry the pending pods cheapest; the last claims,
// partly full, still shrink to the cheapest type that holds what they got.

// ceilingFor returns the allocatable of the type of pool ps that would carry the pending
// pods cheapest, among those that hold what p needs (needs) and that p accepts; nil
// when none does.
//
// A type's cost for the pods is its cheapest offering's price times the nodes of it the
// pods' total CPU, memory and pod count would fill, whichever needs most; each node's
// room counts less half an average pod, which first-fit leaves unused on average.
func (s *solver) ceilingFor(p *podInfo, ps *poolState) *resources {
	allowed := ps.allowedFor(p)
	need := s.needs(p)
	var best *resources
	bestCost := 0.0
	for i := range ps.types {
		t := &ps.types[i]
		if !need.fits(&t.allocatable) {
			continue
		}
		price := -1.0
		for o := t.first; o < t.last; o++ {
			if allowed.has(o) && (price < 0 || ps.offerings[o].price < price) {
				price = ps.offerings[o].price
			}
		}
		cpu := float64(t.allocatable.cpu) - float64(s.meanPod.cpu)/2
		memory := float64(t.allocatable.memory) - float64(s.meanPod.memory)/2
		if price < 0 || cpu <= 0 || memory <= 0 {
			continue
		}
		slots := float64(t.allocatable.pods) - 0.5
		if slots <= 0 {
			continue
		}
		cost := price * max(float64(s.demand.cpu)/cpu, float64(s.demand.memory)/memory, float64(s.demand.pods)/slots)
		// Among equals the larger type: fewer nodes, less room left over.
		if best == nil || cost < bestCost || (cost == bestCost && t.allocatable.cpu > best.cpu) {
			best, bestCost = &t.allocatable, cost
		}
	}
	return best
}

package scheduling

import "math"

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
	allowed := ps.placeableFor(p)
	need := s.needs(p)
	type candidate struct {
		allocatable *resources
		cost        float64
	}
	var candidates []candidate
	bestCost := math.Inf(1)
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
		cpu := float64(t.allocatable.cpu) - float64(s.demand.cpu)/float64(2*s.demand.pods)
		memory := float64(t.allocatable.memory) - float64(s.demand.memory)/float64(2*s.demand.pods)
		slots := float64(t.allocatable.pods) - 0.5
		if price < 0 || cpu <= 0 || memory <= 0 || slots <= 0 {
			continue
		}
		cost := price * max(float64(s.demand.cpu)/cpu, float64(s.demand.memory)/memory, float64(s.demand.pods)/slots)
		candidates = append(candidates, candidate{&t.allocatable, cost})
		bestCost = min(bestCost, cost)
	}
	// The largest type within sizeTolerance of the cheapest: fewer nodes to launch and
	// start for about the same price.
	var best *resources
	for _, c := range candidates {
		if c.cost <= bestCost*(1+sizeTolerance) && (best == nil || c.allocatable.cpu > best.cpu) {
			best = c.allocatable
		}
	}
	return best
}

// sizeTolerance is how much dearer than the cheapest a larger ceiling type may carry the
// pending pods: a few percent buys far fewer nodes.
const sizeTolerance = 0.03

// worthJoining reports whether p may join new claim b when that narrows the offerings
// that hold the claim's pods and p (grown) to those p accepts (candidates). Not when the
// claim's price would rise by more than p would cost on a claim of its own kind, as
// when a pod tied to on-demand or to one zone turns a claim of spot pods into an
// on-demand one; nor when the claim's offerings sell what p needs dearer than p could
// buy it by more than a quarter, as when a pod that could run on spot would fill an
// on-demand claim. A claim p opens is always worth it.
func (s *solver) worthJoining(p *podInfo, b *bin, grown, candidates bitset) bool {
	if len(b.placed) == 0 {
		return true
	}
	ps := b.pool
	own := s.share(p, ps)
	if costOf(&p.requests, b.rates) > own*dearerShare {
		return false
	}
	return candidates.equal(grown) || ps.offerings[cheapest(ps, candidates)].price-ps.offerings[cheapest(ps, grown)].price <= own
}

// dearerShare is how much more than on a claim of its own kind a pod may cost on a
// claim it joins: a little, for fewer nodes.
const dearerShare = 1.5

// share is what p costs at the pool's lowest prices per unit among the offerings p
// accepts.
func (s *solver) share(p *podInfo, ps *poolState) float64 {
	key := p.affinityKey + "\x00" + p.volumes.key
	rates, ok := ps.rates[key]
	if !ok {
		rates = [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
		ps.placeableFor(p).each(func(i int) {
			o := &ps.offerings[i]
			rates = minRates(rates, o.price, &ps.types[o.typ].allocatable)
		})
		ps.rates[key] = rates
	}
	return costOf(&p.requests, rates)
}

// minRates lowers rates to an offering's prices per millicore, per byte and per pod slot.
func minRates(rates [3]float64, price float64, a *resources) [3]float64 {
	if a.cpu > 0 && a.memory > 0 && a.pods > 0 {
		rates[0] = min(rates[0], price/float64(a.cpu))
		rates[1] = min(rates[1], price/float64(a.memory))
		rates[2] = min(rates[2], price/float64(a.pods))
	}
	return rates
}

// costOf is what requests cost at rates: the most of their CPU, memory and one pod slot.
func costOf(r *resources, rates [3]float64) float64 {
	return max(float64(r.cpu)*rates[0], float64(r.memory)*rates[1], rates[2])
}

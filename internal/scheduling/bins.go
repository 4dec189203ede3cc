package scheduling

import (
	"math"
	"math/bits"

	corev1 "k8s.io/api/core/v1"
)

// binKind is where a bin's capacity comes from, in the order bins are tried.
type binKind int

const (
	existingBin binKind = iota // a node that exists
	inFlightBin                // a claim already coming
	standbyBin                 // a standby claim, to start
	newBin                     // a claim to create
)

// bin is somewhere pods can go: a node, a claim, or a claim the simulation opens.
type bin struct {
	kind binKind
	name string
	// node carries the labels and taints of a node or claim; nil for new bins, whose
	// offerings carry them.
	node   *corev1.Node
	taints []corev1.Taint
	// free is what a node or claim has left; new bins use used and their offerings.
	free resources
	// zones is the set of zone indexes the bin is, or may still be, in.
	zones uint64
	ports []hostPort
	// counts holds, per group, the matching pods here; antiHost, the pods here with a
	// hostname anti-affinity term on the group.
	counts   []int32
	antiHost []int32
	// affinityOK caches, by pod affinity key, whether the node matches.
	affinityOK map[string]bool
	// volumesMatch caches, by volume selectors key, whether the node matches.
	volumesMatch map[string]bool
	// attached holds the volumes attached to the node, by CSI driver and ID;
	// attachLimits is how many each driver may attach to a node or claim (absent:
	// unlimited). New bins take their limits from their types.
	attached     map[string]map[string]struct{}
	attachLimits map[string]int64
	placed       []*podInfo

	// New bins only.
	pool   *poolState
	offers bitset
	used   resources
	// bound is, per resource, the most any offering left could hold: a quick no.
	bound resources
	// reserved is the capacity held against the pool's limits.
	reserved resources
	// rates are the lowest prices per millicore, per byte and per pod slot among the
	// offerings left (ceiling.go).
	rates [3]float64
	// ceiling is the most the claim may grow to: the allocatable of the type that buys
	// the pods' capacity cheapest (ceiling.go); nil is no ceiling.
	ceiling *resources
}

func zoneBit(z int) uint64 {
	if z < 0 {
		return 0
	}
	return 1 << uint(z)
}

// singleZone returns the zone index of a one-zone mask, or -1.
func singleZone(mask uint64) int {
	if bits.OnesCount64(mask) != 1 {
		return -1
	}
	return bits.TrailingZeros64(mask)
}

// hostPortsFree reports whether none of ports is taken on the bin.
func (b *bin) hostPortsFree(ports []hostPort) bool {
	for _, want := range ports {
		for _, taken := range b.ports {
			if want.conflicts(taken) {
				return false
			}
		}
	}
	return true
}

// nodeAffinityOK reports whether a fixed bin's node matches the pod's node affinity.
func (b *bin) nodeAffinityOK(p *podInfo) bool {
	if p.affinityKey == "" {
		return true
	}
	ok, cached := b.affinityOK[p.affinityKey]
	if !cached {
		ok = p.matchesNodeAffinity(b.node)
		if b.affinityOK == nil {
			b.affinityOK = map[string]bool{}
		}
		b.affinityOK[p.affinityKey] = ok
	}
	return ok
}

// refreshBound recomputes, once the bin's offerings changed, the largest capacity they
// could give and their lowest prices per unit (ceiling.go).
func (b *bin) refreshBound() {
	var bound resources
	last := -1
	b.rates = [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	b.offers.each(func(i int) {
		o := &b.pool.offerings[i]
		a := &b.pool.types[o.typ].allocatable
		b.rates = minRates(b.rates, o.price, a)
		if o.typ != last {
			last = o.typ
			bound.max(a)
		}
	})
	b.bound = bound
}

// offeringZones returns the zones of the bin's offerings.
func (b *bin) offeringZones() uint64 {
	var mask uint64
	for z, m := range b.pool.zoneMask {
		if b.offers.intersects(m) {
			mask |= zoneBit(z)
		}
	}
	return mask
}

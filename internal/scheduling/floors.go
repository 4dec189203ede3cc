package scheduling

import "fmt"

// A pool requirement with minValues is a flexibility floor: each new claim of the pool
// must list instance types with at least that many distinct values of the requirement's
// key (five families, say), so that the cloud can still buy it when some of them run out
// of capacity. The pods a claim takes narrow its types; a pod that would narrow them
// below a floor goes elsewhere, and a pod that alone would is left unschedulable.
//
// The floors are checked on the types the claim would list (claimable), not on all its
// offerings: a type the listing leaves out does not count. The cheapest types that meet
// the floors are kept in the launch whatever maxLaunchTypes says, and their capacity is
// held against the pool's limits, so that the limits cannot drop them later.

// floor is one minValues requirement of a pool.
type floor struct {
	key string
	min int
	// valueOf is, per type of the pool (poolState.types), the index of its value of key;
	// -1 for a type without the label.
	valueOf []int32
	// seen is scratch space, one flag per value.
	seen []bool
}

// newFloors reads the minValues requirements of the pool's template. The keys are those
// of the instance type, so any offering of a type tells its value.
func newFloors(p Pool, ps *poolState) []floor {
	var floors []floor
	for _, r := range p.Pool.Spec.Template.Spec.Requirements {
		if r.MinValues == nil || *r.MinValues <= 0 {
			continue
		}
		f := floor{key: r.Key, min: int(*r.MinValues), valueOf: make([]int32, len(ps.types))}
		index := map[string]int32{}
		for t, it := range ps.types {
			value, ok := ps.offerings[it.first].node.Labels[r.Key]
			if !ok {
				f.valueOf[t] = -1
				continue
			}
			v, known := index[value]
			if !known {
				v = int32(len(index))
				index[value] = v
			}
			f.valueOf[t] = v
		}
		f.seen = make([]bool, len(index))
		floors = append(floors, f)
	}
	return floors
}

// floorTypes returns, among types (cheapest first), the indexes of those a claim must
// keep to meet the pool's floors: the cheapest, then each next type that brings a value
// a floor still lacks. ok is false when all of types together do not meet them.
func (ps *poolState) floorTypes(types []pricedType) (keep []int, ok bool) {
	counts := make([]int, len(ps.floors))
	for i := range ps.floors {
		clear(ps.floors[i].seen)
	}
	met := 0
	for n, t := range types {
		brings := n == 0
		for i := range ps.floors {
			f := &ps.floors[i]
			if v := f.valueOf[t.index]; v >= 0 && !f.seen[v] {
				f.seen[v] = true
				if counts[i] < f.min {
					brings = true
					if counts[i]++; counts[i] == f.min {
						met++
					}
				}
			}
		}
		if brings {
			keep = append(keep, t.index)
		}
		if met == len(ps.floors) {
			return keep, true
		}
	}
	return keep, false
}

// floorCapacity returns the largest capacity among the types a new claim of offerings
// set must keep to meet the pool's floors, which the pool's limits must hold; ok is false
// when the claim cannot meet them.
func (s *solver) floorCapacity(ps *poolState, set bitset) (capacity resources, ok bool) {
	types, _, _ := s.claimable(&bin{pool: ps, offers: set})
	keep, ok := ps.floorTypes(types)
	if !ok {
		return resources{}, false
	}
	for _, t := range keep {
		capacity.max(&ps.types[t].capacity)
	}
	return capacity, true
}

// floorShortfall says which floor the types with an offering in set fall short of, and
// by how much; "" when they meet every floor.
func (ps *poolState) floorShortfall(set bitset) string {
	for i := range ps.floors {
		f := &ps.floors[i]
		clear(f.seen)
		count, last := 0, -1
		set.each(func(o int) {
			t := ps.offerings[o].typ
			if t == last {
				return
			}
			last = t
			if v := f.valueOf[t]; v >= 0 && !f.seen[v] {
				f.seen[v] = true
				count++
			}
		})
		if count < f.min {
			return fmt.Sprintf("the instance types that hold the pod and match its node selector and affinity have %d distinct values of %s; the pool's requirement asks for at least %d (minValues)", count, f.key, f.min)
		}
	}
	return ""
}

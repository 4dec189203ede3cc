package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// NoPools is the reason key when there is no pool at all.
const NoPools = ""

// explain says, per pool, which predicate keeps p off the pool's new nodes: the first
// that fails of taints, node selector and affinity, resources, limits, and topology.
func (s *solver) explain(p *podInfo) map[string]string {
	if len(s.pools) == 0 {
		return map[string]string{NoPools: "no NodePool can make nodes"}
	}
	reasons := make(map[string]string, len(s.pools))
	for _, ps := range s.pools {
		reasons[ps.name] = s.explainPool(p, ps)
	}
	return reasons
}

func (s *solver) explainPool(p *podInfo, ps *poolState) string {
	if len(ps.offerings) == 0 {
		return "the node class offers no instance type within the pool's requirements"
	}
	if !ps.toleratedBy(p) {
		for _, t := range ps.taints {
			if !tolerates(p.pod.Spec.Tolerations, []corev1.Taint{t}) {
				return fmt.Sprintf("the pod does not tolerate the pool's taint %s", taintString(t))
			}
		}
	}
	allowed := ps.allowedFor(p)
	if allowed.empty() {
		return "no instance type, zone or capacity type matches the pod's node selector and node affinity"
	}
	if allowed = ps.placeableFor(p); allowed.empty() {
		return "no zone or instance type the pool offers matches the node affinity of the pod's volumes (a bound volume's zone, or its StorageClass's allowed topologies)"
	}
	var smallest *instanceType
	for i := range ps.types {
		t := &ps.types[i]
		if p.requests.fits(&t.allocatable) && rangeIntersects(allowed, t.first, t.last) && (smallest == nil || t.capacity.cpu < smallest.capacity.cpu) {
			smallest = t
		}
	}
	if smallest == nil {
		return fmt.Sprintf("no instance type holds the pod's requests (cpu %s, memory %s) with the DaemonSets that run there",
			resource.NewMilliQuantity(p.requests.cpu, resource.DecimalSI), resource.NewQuantity(p.requests.memory, resource.BinarySI))
	}
	if len(ps.floors) > 0 {
		holding := allowed.clone()
		for i := range ps.types {
			if t := &ps.types[i]; !p.requests.fits(&t.allocatable) {
				holding.clearRange(t.first, t.last)
			}
		}
		if why := ps.floorShortfall(holding); why != "" {
			return why
		}
	}
	if ps.nodesLeft == 0 {
		return "the pool's limits.nodes allows no more nodes"
	}
	for _, name := range ps.limited {
		if ps.left[name] < smallest.capacity.get(name) {
			return fmt.Sprintf("the pool's limits.%s leaves too little for a node that holds the pod", name)
		}
	}
	return "the pod's topology spread or pod affinity constraints cannot be met"
}

func rangeIntersects(b bitset, first, last int) bool {
	for i := first; i < last; i++ {
		if b.has(i) {
			return true
		}
	}
	return false
}

func taintString(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

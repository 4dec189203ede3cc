package scheduling

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// maxLaunchTypes bounds the instance types a launch may fall back to when the cheapest
// has no capacity.
const maxLaunchTypes = 10

// result turns the bins into decisions.
func (s *solver) result(unschedulable []*podInfo) Result {
	r := Result{Existing: map[*corev1.Pod]string{}, InFlight: map[*corev1.Pod]string{}}
	for _, b := range s.bins {
		if len(b.placed) == 0 {
			continue
		}
		pods := make([]*corev1.Pod, len(b.placed))
		for i, p := range b.placed {
			pods[i] = p.pod
		}
		switch b.kind {
		case existingBin:
			for _, pod := range pods {
				r.Existing[pod] = b.name
			}
		case inFlightBin:
			for _, pod := range pods {
				r.InFlight[pod] = b.name
			}
		case standbyBin:
			r.Starts = append(r.Starts, Start{Claim: b.name, Pods: pods})
		case newBin:
			r.Launches = append(r.Launches, s.launch(b, pods))
		}
	}
	for _, p := range unschedulable {
		r.Unschedulable = append(r.Unschedulable, Unschedulable{Pod: p.pod, Reasons: s.explain(p)})
	}
	return r
}

// launch describes a new claim: the types that hold its pods, cheapest first, and the
// zone and capacity type when the pods tied it to them.
func (s *solver) launch(b *bin, pods []*corev1.Pod) Launch {
	ps := b.pool
	cheapestOf := map[int]float64{}
	zones, capacityTypes := map[int]bool{}, map[string]bool{}
	b.offers.each(func(i int) {
		o := ps.offerings[i]
		if price, ok := cheapestOf[o.typ]; !ok || o.price < price {
			cheapestOf[o.typ] = o.price
		}
		zones[o.zone] = true
		capacityTypes[o.ct] = true
	})
	types := make([]int, 0, len(cheapestOf))
	for t := range cheapestOf {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, c int) int {
		return cmp.Or(cmp.Compare(cheapestOf[a], cheapestOf[c]), cmp.Compare(ps.types[a].name, ps.types[c].name))
	})
	l := Launch{Pool: ps.name, Pods: pods, Requests: toList(b.used), PricePerHour: cheapestOf[types[0]]}
	for _, t := range types[:min(len(types), maxLaunchTypes)] {
		l.InstanceTypes = append(l.InstanceTypes, ps.types[t].name)
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

// toList converts requests back to a Kubernetes resource list.
func toList(r resources) corev1.ResourceList {
	list := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(r.cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(r.memory, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(r.pods, resource.DecimalSI),
	}
	if r.storage > 0 {
		list[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(r.storage, resource.BinarySI)
	}
	for name, v := range r.extended {
		list[name] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	return list
}

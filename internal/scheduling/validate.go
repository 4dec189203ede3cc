package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// MaxZones is the most zones one simulation handles: zone sets are 64-bit masks, which
// keeps the topology predicates fast. Clouds have a handful of zones per region, so a
// pool or cluster beyond it is a mistake to report, not a case to plan for.
const MaxZones = 64

// Validate reports input the simulation cannot decide on: more than MaxZones zones
// among the nodes, the claims and the pools' offerings.
func (in Input) Validate() error {
	zones := map[string]bool{}
	for _, n := range in.Nodes {
		zones[n.Node.Labels[corev1.LabelTopologyZone]] = true
	}
	for _, c := range in.Claims {
		zones[c.Labels[corev1.LabelTopologyZone]] = true
	}
	for _, p := range in.Pools {
		for _, it := range p.InstanceTypes {
			for _, o := range it.Offerings {
				zones[o.Zone] = true
			}
		}
	}
	delete(zones, "")
	if len(zones) > MaxZones {
		return fmt.Errorf("the nodes, claims and pools span %d zones; the scheduling simulation handles at most %d", len(zones), MaxZones)
	}
	return nil
}

// refuseAll is the result of a simulation that cannot decide: every pod unschedulable,
// for why.
func (s *solver) refuseAll(why string) Result {
	r := Result{Existing: map[*corev1.Pod]string{}, InFlight: map[*corev1.Pod]string{}}
	for _, p := range s.pods {
		r.Unschedulable = append(r.Unschedulable, Unschedulable{Pod: p.pod, Reasons: map[string]string{NoPools: why}})
	}
	return r
}

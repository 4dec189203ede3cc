package nodepool

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// A pool's warm pool is spread across the zones its requirements allow, as evenly as the
// offerings permit, the way cloud auto-scaling groups balance theirs: one zone's
// capacity shortage then takes a share of the warm pool, not all of it. New standby
// claims go to the zones with the fewest; a removal takes from the zone with the most;
// no healthy standby node is ever replaced only to move it.

// standbyZones are the zones a new standby claim of a pool may go to, each with the
// price of its cheapest offering that can stand by.
type standbyZones map[string]float64

// zonesForStandby lists the zones where the pool's standby nodes can go: an available
// offering of a capacity type that can stand by, within the template's and the warm
// pool's requirements, of a type that under the template's kubelet configuration
// leaves CPU and memory for pods and has room for spec.standby.resources; and, for each requirement with minValues, types of
// at least that many values of its key in the zone.
func zonesForStandby(pool *v1beta1.NodePool, types []*cloudprovider.InstanceType) (standbyZones, error) {
	all := append(slices.Clone(pool.Spec.Template.Spec.Requirements), pool.Spec.Standby.Requirements...)
	requirements := v1beta1.CoreRequirements(all)
	var floors []v1beta1.NodeSelectorRequirement
	for _, r := range all {
		if r.MinValues != nil {
			floors = append(floors, r)
		}
	}
	zones := standbyZones{}
	// values holds, per zone, the values of each floor's key among the types there.
	values := map[string][]map[string]bool{}
	for _, t := range types {
		if !cloudprovider.HasRoomFor(t, pool.Spec.Template.Spec.Kubelet, pool.Spec.Standby.Resources) {
			continue
		}
		for _, o := range t.Offerings {
			if !o.Available || !cloudprovider.CanStandBy(o.CapacityType) {
				continue
			}
			ok, err := cloudprovider.Satisfies(t, o, requirements)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if price, seen := zones[o.Zone]; !seen || o.PricePerHour < price {
				zones[o.Zone] = o.PricePerHour
			}
			if len(floors) > 0 && values[o.Zone] == nil {
				values[o.Zone] = make([]map[string]bool, len(floors))
				for i := range floors {
					values[o.Zone][i] = map[string]bool{}
				}
			}
			labels := t.Labels(o)
			for i, f := range floors {
				if v, has := labels[f.Key]; has {
					values[o.Zone][i][v] = true
				}
			}
		}
	}
	for zone := range zones {
		for i, f := range floors {
			if len(values[zone][i]) < int(*f.MinValues) {
				delete(zones, zone)
				break
			}
		}
	}
	return zones, nil
}

// noStandbyMessage says why no zone can take a standby node of the pool.
func noStandbyMessage(pool *v1beta1.NodePool) string {
	msg := "no available offering can stand by within the pool's requirements and spec.standby"
	if len(pool.Spec.Standby.Resources) > 0 {
		var room []string
		for name, q := range pool.Spec.Standby.Resources {
			room = append(room, fmt.Sprintf("%s %s", name, q.String()))
		}
		slices.Sort(room)
		msg += " with room for " + strings.Join(room, ", ")
	}
	for _, r := range append(slices.Clone(pool.Spec.Template.Spec.Requirements), pool.Spec.Standby.Requirements...) {
		if r.MinValues != nil {
			msg += fmt.Sprintf(", among types of at least %d values of %s (minValues)", *r.MinValues, r.Key)
		}
	}
	return msg + fmt.Sprintf(": standby nodes must be of a capacity type that can stop and start (%s); spot is for cold launches only",
		strings.Join(cloudprovider.StandbyCapacityTypes, ", "))
}

// spreadNew returns a zone for each of n new standby claims: each goes to the zone with
// the fewest standby claims counting those placed before it, ties to the cheapest zone,
// then the first by name.
func spreadNew(n int, counts map[string]int, zones standbyZones) []string {
	names := make([]string, 0, len(zones))
	for z := range zones {
		names = append(names, z)
	}
	if len(names) == 0 {
		return nil
	}
	counts = maps.Clone(counts)
	out := make([]string, 0, n)
	for range n {
		best := slices.MinFunc(names, func(a, b string) int {
			return cmp.Or(cmp.Compare(counts[a], counts[b]), cmp.Compare(zones[a], zones[b]), cmp.Compare(a, b))
		})
		counts[best]++
		out = append(out, best)
	}
	return out
}

// fullestFirst picks n of members to remove: each from the zone that has the most of
// them left, the first in members' order (oldest first) within it.
func fullestFirst(members []member, n int) []member {
	if n <= 0 {
		return nil
	}
	byZone := map[string][]member{}
	var zones []string
	for _, m := range members {
		if _, ok := byZone[m.zone]; !ok {
			zones = append(zones, m.zone)
		}
		byZone[m.zone] = append(byZone[m.zone], m)
	}
	out := make([]member, 0, n)
	for range min(n, len(members)) {
		fullest := slices.MaxFunc(zones, func(a, b string) int {
			// The earliest zone wins ties, so that among equals the oldest goes first.
			return cmp.Or(cmp.Compare(len(byZone[a]), len(byZone[b])), cmp.Compare(byZone[b][0].created.UnixNano(), byZone[a][0].created.UnixNano()))
		})
		out = append(out, byZone[fullest][0])
		byZone[fullest] = byZone[fullest][1:]
		if len(byZone[fullest]) == 0 {
			zones = slices.DeleteFunc(zones, func(z string) bool { return z == fullest })
		}
	}
	return out
}

// claimZone is the zone a claim's instance is in, or the one its requirements pin it
// to before launch; "" when neither is known.
func claimZone(c *v1beta1.NodeClaim) string {
	if c.Status.Zone != "" {
		return c.Status.Zone
	}
	for _, r := range c.Spec.Requirements {
		if r.Key == corev1.LabelTopologyZone && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			return r.Values[0]
		}
	}
	return ""
}

// heldRecheck is how often a pool with held standby claims is looked at again: their
// offerings' marks expire on their own.
const heldRecheck = 15 * time.Second

// unavailableOfferings lists the offerings the cloud reports unavailable: out of
// capacity, or marked so after a launch or a start failed for lack of it.
func unavailableOfferings(types []*cloudprovider.InstanceType) map[cloudprovider.OfferingKey]bool {
	out := map[cloudprovider.OfferingKey]bool{}
	for _, t := range types {
		for _, o := range t.Offerings {
			if !o.Available {
				out[t.Key(o)] = true
			}
		}
	}
	return out
}

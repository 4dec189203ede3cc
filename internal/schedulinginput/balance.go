package schedulinginput

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/scheduling"
)

// balanceStandby orders the standby claims of claims so that, among standby claims the
// simulation finds equal (same rank and price: it keeps their order), those of the zone
// where the pool stands by most come first, taking turns as the zones even out: a burst
// then leaves each pool's warm pool as balanced across zones as it can. Other claims
// keep their places.
func balanceStandby(claims []scheduling.Claim) {
	var standby []int
	perZone := map[[2]string]int{}
	for i, c := range claims {
		if c.Standby {
			standby = append(standby, i)
			perZone[poolZone(c)]++
		}
	}
	// A claim's turn is how many of its pool's standby claims its zone has left once it
	// and those of its zone ordered before it are started.
	turn := make(map[int]int, len(standby))
	taken := map[[2]string]int{}
	for _, i := range standby {
		key := poolZone(claims[i])
		turn[i] = perZone[key] - taken[key]
		taken[key]++
	}
	ordered := slices.Clone(standby)
	slices.SortStableFunc(ordered, func(a, b int) int { return cmp.Compare(turn[b], turn[a]) })
	sorted := make([]scheduling.Claim, len(ordered))
	for n, i := range ordered {
		sorted[n] = claims[i]
	}
	for n, i := range standby {
		claims[i] = sorted[n]
	}
}

// poolZone keys a claim by its pool and zone; a claim with no zone yet has its own.
func poolZone(c scheduling.Claim) [2]string {
	zone := c.Labels[corev1.LabelTopologyZone]
	if zone == "" {
		zone = "?" + c.Claim.Name
	}
	return [2]string{c.Claim.Spec.NodePool, zone}
}

// Package standby ranks the claims asked to stand by by how soon each would run if it
// were asked to run instead. Provisioning, placing pods on standby claims, and the pool
// controller, starting standby claims for a window's running minimum, pick by the same
// ranking.
package standby

import "github.com/stratos-sh/stratos/api/v1beta1"

// rankOf is the ranking, lowest first. A claim warming up is initialised and running:
// asked to run, it takes pods at once, with no cloud call. A standby one is stopped and
// runs after a start (12–20 s). One still coming up runs once initialised, skipping its
// warmup; one stopping runs after its stop and a start.
var rankOf = map[v1beta1.NodeClaimPhase]int{
	v1beta1.PhaseWarmingUp:    0,
	v1beta1.PhaseStandby:      1,
	v1beta1.PhaseInitializing: 2,
	v1beta1.PhaseRegistering:  2,
	v1beta1.PhaseLaunching:    2,
	"":                        2,
	v1beta1.PhaseStopping:     3,
}

// Rank is how soon a claim asked to stand by, in phase, would run if asked to run: the
// lower the sooner. ok is false for the phases in which it is no standby capacity, such
// as a running node being given back.
func Rank(phase v1beta1.NodeClaimPhase) (rank int, ok bool) {
	rank, ok = rankOf[phase]
	return rank, ok
}

package standby

import (
	"testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The ranking puts a claim warming up (running already) before a stopped one (a
// start), those still coming up after both, and one stopping (a stop, then a start)
// last; a claim running, starting, draining or terminating is no standby capacity.
func TestRankOrdersByHowSoonAClaimRuns(t *testing.T) {
	order := [][]v1beta1.NodeClaimPhase{
		{v1beta1.PhaseWarmingUp},
		{v1beta1.PhaseStandby},
		{"", v1beta1.PhaseLaunching, v1beta1.PhaseRegistering, v1beta1.PhaseInitializing},
		{v1beta1.PhaseStopping},
	}
	previous := -1
	for _, equals := range order {
		first, ok := Rank(equals[0])
		if !ok || first <= previous {
			t.Fatalf("Rank(%q) = %d, %v; want a candidate ranked after %d", equals[0], first, ok, previous)
		}
		for _, phase := range equals[1:] {
			if rank, ok := Rank(phase); !ok || rank != first {
				t.Errorf("Rank(%q) = %d, %v; want %d like %q", phase, rank, ok, first, equals[0])
			}
		}
		previous = first
	}
	for _, phase := range []v1beta1.NodeClaimPhase{v1beta1.PhaseStarting, v1beta1.PhaseRunning, v1beta1.PhaseDraining, v1beta1.PhaseTerminating} {
		if rank, ok := Rank(phase); ok {
			t.Errorf("Rank(%q) = %d, true; want no standby capacity", phase, rank)
		}
	}
}

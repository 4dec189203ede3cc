package runner

import (
	"testing"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

func claimIn(desired v1alpha1.DesiredState, phase v1alpha1.NodeClaimPhase) *v1alpha1.NodeClaim {
	return &v1alpha1.NodeClaim{Spec: v1alpha1.NodeClaimSpec{DesiredState: desired}, Status: v1alpha1.NodeClaimStatus{Phase: phase}}
}

// A claim asked to run counts by where it was: warm (standby or stopping into it),
// still warming up for standby, or created to run pods.
func TestObserverCountsHowCapacityWasObtained(t *testing.T) {
	o := newObserver()
	h := o.claimHandler()
	for _, phase := range []v1alpha1.NodeClaimPhase{v1alpha1.PhaseStandby, v1alpha1.PhaseStopping} {
		h.OnUpdate(claimIn(v1alpha1.DesiredStandby, phase), claimIn(v1alpha1.DesiredRunning, phase))
	}
	for _, phase := range []v1alpha1.NodeClaimPhase{"", v1alpha1.PhaseLaunching, v1alpha1.PhaseRegistering, v1alpha1.PhaseInitializing, v1alpha1.PhaseWarmingUp} {
		h.OnUpdate(claimIn(v1alpha1.DesiredStandby, phase), claimIn(v1alpha1.DesiredRunning, phase))
	}
	h.OnAdd(claimIn(v1alpha1.DesiredRunning, ""), false)
	h.OnAdd(claimIn(v1alpha1.DesiredRunning, v1alpha1.PhaseRunning), true) // there before the scenario
	h.OnAdd(claimIn(v1alpha1.DesiredStandby, ""), false)                   // the pool warming up
	h.OnUpdate(claimIn(v1alpha1.DesiredRunning, v1alpha1.PhaseStarting), claimIn(v1alpha1.DesiredRunning, v1alpha1.PhaseRunning))

	want := capacityCounts{startedFromStandby: 2, takenWhileWarming: 5, launchedCold: 1}
	if got := o.counters(); got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
}

package runner

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func claimIn(desired v1beta1.DesiredState, phase v1beta1.NodeClaimPhase) *v1beta1.NodeClaim {
	return &v1beta1.NodeClaim{Spec: v1beta1.NodeClaimSpec{DesiredState: desired}, Status: v1beta1.NodeClaimStatus{Phase: phase}}
}

// A claim asked to run counts by where it was: warm (standby or stopping into it),
// still warming up for standby, or created to run pods.
func TestObserverCountsHowCapacityWasObtained(t *testing.T) {
	o := newObserver()
	h := o.claimHandler()
	for _, phase := range []v1beta1.NodeClaimPhase{v1beta1.PhaseStandby, v1beta1.PhaseStopping} {
		h.OnUpdate(claimIn(v1beta1.DesiredStandby, phase), claimIn(v1beta1.DesiredRunning, phase))
	}
	for _, phase := range []v1beta1.NodeClaimPhase{"", v1beta1.PhaseLaunching, v1beta1.PhaseRegistering, v1beta1.PhaseInitializing, v1beta1.PhaseWarmingUp} {
		h.OnUpdate(claimIn(v1beta1.DesiredStandby, phase), claimIn(v1beta1.DesiredRunning, phase))
	}
	h.OnAdd(claimIn(v1beta1.DesiredRunning, ""), false)
	h.OnAdd(claimIn(v1beta1.DesiredRunning, v1beta1.PhaseRunning), true) // there before the scenario
	h.OnAdd(claimIn(v1beta1.DesiredStandby, ""), false)                  // the pool warming up
	h.OnUpdate(claimIn(v1beta1.DesiredRunning, v1beta1.PhaseStarting), claimIn(v1beta1.DesiredRunning, v1beta1.PhaseRunning))

	want := capacityCounts{startedFromStandby: 2, takenWhileWarming: 5, launchedCold: 1, claimsCreated: 2}
	if got := o.counters(); got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
}

func nodeNamed(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

// Every Node object seen under a name is kept, in order, with the provider ID it got,
// even one set after it registered; Nodes there before the watch count as registered at
// the zero time.
func TestObserverRecordsNodeRegistrations(t *testing.T) {
	o := newObserver()
	h := o.nodeHandler()
	h.OnAdd(nodeNamed("before", "fake:///fake-1a/i-0"), true)
	h.OnAdd(nodeNamed("reused", "aws:///us-east-1a/i-old"), false)
	h.OnAdd(nodeNamed("reused", ""), false)
	h.OnUpdate(nodeNamed("reused", ""), nodeNamed("reused", "aws:///us-east-1a/i-new"))
	h.OnUpdate(nodeNamed("reused", "aws:///us-east-1a/i-new"), nodeNamed("reused", "aws:///us-east-1a/i-other"))

	seen := o.nodeRegistrations()
	if before := seen["before"]; len(before) != 1 || !before[0].at.IsZero() {
		t.Errorf("a Node there before the watch: %+v, want one registration at the zero time", before)
	}
	reused := seen["reused"]
	if len(reused) != 2 || reused[0].providerID != "aws:///us-east-1a/i-old" || reused[1].providerID != "aws:///us-east-1a/i-new" {
		t.Fatalf("a reused name: %+v, want i-old then i-new", reused)
	}
	if reused[0].at.IsZero() || reused[1].at.Before(reused[0].at) {
		t.Errorf("registrations %+v: want times in the order seen", reused)
	}
}

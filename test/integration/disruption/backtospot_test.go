package disruption_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/stack"
)

// capacityTypes holds a pool's nodes to these capacity types, in place of any the pool
// held them to before.
func capacityTypes(p *v1beta1.NodePool, types ...string) {
	reqs := slices.DeleteFunc(p.Spec.Template.Spec.Requirements, func(r v1beta1.NodeSelectorRequirement) bool { return r.Key == v1beta1.LabelCapacityType })
	p.Spec.Template.Spec.Requirements = append(reqs, v1beta1.NodeSelectorRequirement{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: types})
}

// spotOrOnDemand lets a pool's nodes be spot or on-demand (its standby nodes are
// on-demand, as they all are).
func spotOrOnDemand(p *v1beta1.NodePool) {
	capacityTypes(p, v1beta1.CapacityTypeSpot, v1beta1.CapacityTypeOnDemand)
}

// noSpot is the fake cloud out of spot capacity everywhere, on-demand still sold.
var noSpot = fakecloud.Faults{InsufficientCapacity: []fakecloud.Offering{{CapacityType: v1beta1.CapacityTypeSpot}}}

// replacementsOf are the claims of a pool asked to run but the one named.
func replacementsOf(f *stack.Fixture, pool, but string) []v1beta1.NodeClaim {
	var out []v1beta1.NodeClaim
	for _, c := range f.Claims(pool) {
		if c.Name != but && c.Spec.DesiredState == v1beta1.DesiredRunning {
			out = append(out, c)
		}
	}
	return out
}

// Standby as insurance, the way back: a pool that runs spot has a node from its
// on-demand warm pool running a pod (as after a spot interruption). While the cloud has
// no spot capacity, the spot node consolidation asks for cannot launch, and the
// on-demand node keeps running its pod. Once spot is offered again, a spot node is
// launched for the pod and runs, and the on-demand node goes back to standby — the same
// instance, stopped, not terminated — since the warm pool has room for it. On main
// before the change consolidation never launched a node, and the on-demand node ran on.
func TestThePoolGoesBackToSpotAndParksItsOnDemandNode(t *testing.T) {
	f := stack.NewFixture(t, nil)
	// Refused spot offerings are avoided for two seconds, not three minutes, so that
	// spot offered again is seen within the test.
	opts := f.Opts
	opts.UnavailableOfferingTTL = 2 * time.Second
	f.RestartOperator(opts)
	f.Cloud.SetFaults(noSpot)
	f.Pool("back-to-spot", 1, func(p *v1beta1.NodePool) {
		underutilized(2)(p)
		spotOrOnDemand(p)
	})
	standby := f.WaitForPhase("back-to-spot", 1, v1beta1.PhaseStandby)
	pod := loaded(f, "web-0", standby[0].Status.NodeName, 0.5, nil)
	onDemand := start(f, standby)[0]
	if onDemand.Status.CapacityType != v1beta1.CapacityTypeOnDemand {
		t.Fatalf("the standby node is %s, want on-demand", onDemand.Status.CapacityType)
	}

	var refused string
	f.Eventually("a spot replacement is refused for lack of spot capacity", func() bool {
		for _, c := range replacementsOf(f, "back-to-spot", onDemand.Name) {
			launched := meta.FindStatusCondition(c.Status.Conditions, v1beta1.ConditionLaunched)
			if launched != nil && launched.Status == metav1.ConditionFalse && launched.Reason == string(cloudprovider.CodeInsufficientCapacity) {
				refused = c.Name
				return true
			}
		}
		return false
	})
	// No pod waits on it: the refused replacement is given up, not left Launching.
	f.Eventually("the refused replacement is given up", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: refused}, &v1beta1.NodeClaim{}))
	})
	if !running(f, onDemand.Name) || podGone(f, pod) {
		t.Fatalf("the on-demand node went (%s, %s) before a replacement ran", f.Claim(onDemand.Name).Spec.DesiredState, f.Claim(onDemand.Name).Status.Phase)
	}
	if note, ok := f.EventNote(onDemand.Name, disruption.ReasonUnderutilized); !ok || !strings.Contains(note, "spot node") || !strings.Contains(note, "before it drains") {
		t.Fatalf("the %s Event says %q; want the spot node that replaces it first", disruption.ReasonUnderutilized, note)
	}

	f.Cloud.SetFaults(fakecloud.Faults{})
	var spot v1beta1.NodeClaim
	f.Eventually("a spot node runs for the pod", func() bool {
		for _, c := range replacementsOf(f, "back-to-spot", onDemand.Name) {
			if c.Status.CapacityType == v1beta1.CapacityTypeSpot && c.Status.Phase == v1beta1.PhaseRunning {
				spot = c
				return true
			}
		}
		return false
	})
	parked := f.WaitForClaim(onDemand.Name, v1beta1.PhaseStandby)
	if parked.Spec.DesiredState != v1beta1.DesiredStandby || parked.Status.InstanceID != onDemand.Status.InstanceID {
		t.Fatalf("the on-demand node came back as %s with instance %s, want standby with its instance %s",
			parked.Spec.DesiredState, parked.Status.InstanceID, onDemand.Status.InstanceID)
	}
	if inst, ok := f.Instance(onDemand.Status.InstanceID); !ok || inst.State != cloudprovider.StateStopped || inst.CapacityType != v1beta1.CapacityTypeOnDemand {
		t.Fatalf("the parked instance is %+v, want a stopped on-demand instance", inst)
	}
	if !podGone(f, pod) {
		t.Fatal("the parked node's pod was not evicted")
	}
	t.Logf("spot node %s (%s) replaced on-demand %s (%s), now standing by", spot.Name, spot.Status.InstanceType, onDemand.Name, onDemand.Status.InstanceType)
	wantDecisions(t, "back-to-spot", disruption.ReasonUnderutilized, map[string]float64{"standby": 1, "terminate": 0})
	f.CheckInvariants()
}

// A budget of zero for Underutilized keeps an on-demand node that a spot node would
// replace: no spot node is launched for it, pass after pass, though it has settled. The
// same pass with the budget raised to one launches the spot node, so the budget alone
// held it. (The test's own disruption controller decides, on a clock it moves; the
// operator's waits for an hour.)
func TestABudgetOfZeroKeepsTheOnDemandNode(t *testing.T) {
	f := stack.NewFixture(t, nil)
	pool := f.Pool("spot-held", 1, func(p *v1beta1.NodePool) {
		idleOnRealTime(p)
		spotOrOnDemand(p)
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionUnderutilized}}}
	})
	standby := f.WaitForPhase("spot-held", 1, v1beta1.PhaseStandby)
	loaded(f, "held-0", standby[0].Status.NodeName, 0.5, nil)
	onDemand := start(f, standby)[0]

	clk := testingclock.NewFakeClock(time.Now())
	d := stack.NewDisruption(t, f.Env, f.Cloud, clk)
	d.WaitFor(t, "the node runs its pod", func(s state.Snapshot) bool { return nodesWithOnePod(s) == 1 })
	for range 3 { // the first sees the node; the others find it settled
		if _, err := d.Pass(f.Ctx); err != nil {
			t.Fatal(err)
		}
		clk.Step(2 * time.Hour)
	}
	if launched := replacementsOf(f, "spot-held", onDemand.Name); len(launched) > 0 || !running(f, onDemand.Name) {
		t.Fatalf("under a budget of 0 the node is %s and %d nodes were launched for it", f.Claim(onDemand.Name).Spec.DesiredState, len(launched))
	}
	if f.EventSeen(onDemand.Name, disruption.ReasonUnderutilized) {
		t.Fatalf("an %s Event under a budget of 0: %v", disruption.ReasonUnderutilized, f.EventReasons(onDemand.Name))
	}

	stack.Patch(f, pool, func(p *v1beta1.NodePool) { p.Spec.Disruption.Budgets[0].Nodes = "1" })
	f.Eventually("with a budget of 1 a spot node is launched for it", func() bool {
		if _, err := d.Pass(f.Ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range replacementsOf(f, "spot-held", onDemand.Name) {
			for _, r := range c.Spec.Requirements {
				if r.Key == v1beta1.LabelCapacityType && len(r.Values) == 1 && r.Values[0] == v1beta1.CapacityTypeSpot {
					return true
				}
			}
		}
		return false
	})
}

// When the warm pool is full (the pool refilled it when its standby node started), the
// on-demand node a spot node replaced is terminated, not parked: the pool keeps no more
// standby nodes than its ceiling.
func TestTheOnDemandNodeIsTerminatedWhenTheWarmPoolIsFull(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("spot-full", 1, func(p *v1beta1.NodePool) {
		underutilized(1)(p)
		spotOrOnDemand(p)
	})
	standby := f.WaitForPhase("spot-full", 1, v1beta1.PhaseStandby)
	loaded(f, "full-0", standby[0].Status.NodeName, 0.5, nil)
	onDemand := start(f, standby)[0]

	replacement := replacedBeforeDraining(f, onDemand, disruption.ReasonUnderutilized)
	if got := f.Claim(replacement).Status.CapacityType; got != v1beta1.CapacityTypeSpot {
		t.Fatalf("the replacement %s is %s, want spot", replacement, got)
	}
	if inst, ok := f.Instance(onDemand.Status.InstanceID); ok && inst.State != cloudprovider.StateTerminated && inst.State != cloudprovider.StateShuttingDown {
		t.Fatalf("the replaced on-demand instance is %s, want it terminated", inst.State)
	}
	wantDecisions(t, "spot-full", disruption.ReasonUnderutilized, map[string]float64{"replace": 1, "standby": 0, "terminate": 1})
	f.CheckInvariants()
}

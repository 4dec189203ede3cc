package warmpool_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/test/stack"
)

// assertRunning checks that a claim's Node takes pods: Ready, uncordoned, untainted.
func (f *fixture) assertRunning(claim *v1beta1.NodeClaim) {
	f.T.Helper()
	node := f.Node(claim.Status.NodeName)
	if !nodeReady(node) || node.Spec.Unschedulable || hasTaint(node, v1beta1.TaintStandbyKey) || node.Labels[v1beta1.LabelState] != "Running" {
		f.T.Fatalf("running Node %s: ready %v, unschedulable %v, taints %v, state %q", node.Name, nodeReady(node), node.Spec.Unschedulable, node.Spec.Taints, node.Labels[v1beta1.LabelState])
	}
	if instance, _ := f.Instance(claim.Status.InstanceID); instance.State != cloudprovider.StateRunning {
		f.T.Fatalf("running claim's instance is %s", instance.State)
	}
}

// assertStandby checks that a claim's instance is stopped and its Node parked.
func (f *fixture) assertStandby(claim *v1beta1.NodeClaim) {
	f.T.Helper()
	node := f.Node(claim.Status.NodeName)
	if !node.Spec.Unschedulable || !hasTaint(node, v1beta1.TaintStandbyKey) || node.Labels[v1beta1.LabelState] != "Standby" {
		f.T.Fatalf("standby Node %s: unschedulable %v, taints %v, state %q", node.Name, node.Spec.Unschedulable, node.Spec.Taints, node.Labels[v1beta1.LabelState])
	}
	if instance, _ := f.Instance(claim.Status.InstanceID); instance.State != cloudprovider.StateStopped {
		f.T.Fatalf("standby claim's instance is %s", instance.State)
	}
}

// A standby claim asked to run becomes a Ready, schedulable Node; asked back, it is a
// stopped standby node again; ten rounds neither leak nor duplicate anything.
func TestStartAndGiveBackTenTimes(t *testing.T) {
	f := newFixture(t, nil)
	// A ceiling of 2 keeps the node given back beside the replacement the pool warms
	// while it runs, so the same claim goes round every time.
	f.Pool("cycle", 1, func(p *v1beta1.NodePool) { p.Spec.Standby.Max = ptr.To[int32](2) })
	claim := f.WaitForPhase("cycle", 1, v1beta1.PhaseStandby)[0]
	f.assertStandby(&claim)
	instanceID, nodeName := claim.Status.InstanceID, claim.Status.NodeName
	// writes are the operator's writes to the claim, its Node and its pre-pull pod, by
	// verb and kind, the claim's creation by the pool included.
	writes := func() map[string]int {
		counts := f.Op.Writes.ForObject(claim.Name)
		for _, name := range []string{nodeName, "prepull-" + claim.Name} {
			for k, v := range f.Op.Writes.ForObject(name) {
				counts[k] += v
			}
		}
		return counts
	}
	toStandby, eventsToStandby := writes(), f.EventReasons(claim.Name)

	for round := range 10 {
		f.SetDesired(claim.Name, v1beta1.DesiredRunning)
		running := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
		f.assertRunning(running)
		if round == 0 {
			t.Logf("launch to standby: writes %v, Events %v", toStandby, eventsToStandby)
			t.Logf("launch to running: writes %v, Events %v", writes(), f.EventReasons(claim.Name))
		}
		f.SetDesired(claim.Name, v1beta1.DesiredStandby)
		standby := f.WaitForClaim(claim.Name, v1beta1.PhaseStandby)
		f.assertStandby(standby)
		if standby.Status.InstanceID != instanceID || standby.Status.NodeName != nodeName {
			t.Fatalf("round %d: the claim moved to instance %s / Node %s", round, standby.Status.InstanceID, standby.Status.NodeName)
		}
	}
	f.CheckInvariants()
	if n := len(f.Claims("cycle")); n != 2 {
		t.Fatalf("after ten rounds the pool has %d claims, want the cycled one and its replacement", n)
	}
}

// slowStarts takes a while over each StartInstances call, as EC2 does, and starts the
// instances at its end; the other calls answer at once.
type slowStarts struct {
	cloudprovider.API
	latency time.Duration
}

func (s slowStarts) StartInstances(ctx context.Context, ids []string) (map[string]error, error) {
	select {
	case <-time.After(s.latency):
	case <-ctx.Done():
	}
	return s.API.StartInstances(ctx, ids)
}

// Twenty standby nodes asked to run at once start with one or two StartInstances calls:
// the first start goes at once, and the others, asked while it is in flight, go together
// in the next call. The intents are written while the operator is down, as one
// provisioning pass writes them, so that the test measures batching rather than how
// fast it can write. The cloud answers starts after two seconds: the in-process fake
// answers in microseconds, faster than the reconciles that follow a restart arrive, and
// on a loaded two-core machine those can spread over hundreds of milliseconds; the test
// is about batching, not about the machine's speed.
func TestTwentyStartsAreBatched(t *testing.T) {
	f := newFixture(t, nil)
	// The twenty started nodes stay empty: consolidation waits an hour, not the default
	// 30 s, which a loaded machine can spend checking them one by one (seen: one was
	// given back before the test got to it, "not found").
	f.Pool("burst", 20, func(p *v1beta1.NodePool) { p.Spec.Disruption.ConsolidateAfter = v1beta1.NewDuration(time.Hour) })
	claims := f.WaitForPhase("burst", 20, v1beta1.PhaseStandby)

	f.Op.Stop()
	before := f.Cloud.Calls()[cloudprovider.OpStart]
	for _, c := range claims {
		claim := c.DeepCopy()
		stack.Patch(f.Fixture, claim, func(c *v1beta1.NodeClaim) { c.Spec.DesiredState = v1beta1.DesiredRunning })
	}
	f.Op = stack.StartOperator(t, f.Env, slowStarts{API: f.Cloud, latency: 2 * time.Second}, f.Opts)
	// The pool replaces the started nodes with new standby ones meanwhile; the twenty
	// claims asked to run are the ones to watch.
	for _, c := range claims {
		f.assertRunning(f.WaitForClaim(c.Name, v1beta1.PhaseRunning))
	}
	starts := f.Cloud.Calls()[cloudprovider.OpStart] - before
	t.Logf("20 starts made %d StartInstances calls", starts)
	if starts > 2 {
		t.Fatalf("20 starts made %d StartInstances calls, want at most 2", starts)
	}
	f.CheckInvariants()
}

package disruption_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/stack"
)

// idleOnRealTime makes a pool's nodes consolidatable after an hour: the fixture's own
// disruption controller, on the real clock, never gets to them, and the test's, on a
// clock it moves, decides alone.
func idleOnRealTime(p *v1beta1.NodePool) {
	underutilized(2)(p)
	p.Spec.Disruption.ConsolidateAfter = &v1beta1.Duration{Duration: time.Hour}
}

// nodesWithOnePod counts the Nodes of a picture that run one pod.
func nodesWithOnePod(s state.Snapshot) int {
	n := 0
	for _, node := range s.Nodes {
		if len(node.Pods) == 1 {
			n++
		}
	}
	return n
}

// Two pools whose nodes could each absorb the other's pods: one pass of disruption
// gives back one of them, not both. Every decision of a pass sees the ones before it —
// the node given back is no room, and its pods need room — so the second pool's node
// keeps running for the first one's pods. On main before the fix, the pass shared one
// simulation input across pools, and both nodes went, leaving their pods nowhere.
func TestOnePassDoesNotConsolidateOntoRoomItIsFreeing(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("left", 1, idleOnRealTime)
	f.Pool("right", 1, idleOnRealTime)
	nodes := map[string]*v1beta1.NodeClaim{}
	for _, pool := range []string{"left", "right"} {
		claim := f.WaitForPhase(pool, 1, v1beta1.PhaseStandby)[0]
		loaded(f, pool+"-app", claim.Status.NodeName, 0.3, nil)
		nodes[pool] = start(f, []v1beta1.NodeClaim{claim})[0]
	}

	clk := testingclock.NewFakeClock(time.Now())
	d := stack.NewDisruption(t, f.Env, f.Cloud, clk)
	d.WaitFor(t, "both nodes run their pod", func(s state.Snapshot) bool { return nodesWithOnePod(s) == 2 })
	if _, err := d.Pass(f.Ctx); err != nil { // first sight of both nodes' workload
		t.Fatal(err)
	}
	clk.Step(2 * time.Hour)
	if _, err := d.Pass(f.Ctx); err != nil { // both have been settled for consolidateAfter
		t.Fatal(err)
	}

	given := 0
	for _, claim := range nodes {
		if f.Claim(claim.Name).Spec.DesiredState == v1beta1.DesiredStandby {
			given++
		}
	}
	if given != 1 {
		t.Fatalf("one pass gave back %d of the two nodes, want exactly 1: the other keeps running for its pods", given)
	}
	f.CheckInvariants()
}

// A panic in a disruption pass (here in a provider's instance types, which
// consolidation's simulation reads) is returned as the pass's error and counted; the
// next pass decides as usual.
func TestDisruptionRecoversFromAPanic(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 2, idleOnRealTime)
	for i, claim := range f.WaitForPhase("web", 2, v1beta1.PhaseStandby) {
		loaded(f, fmt.Sprintf("web-%d", i), claim.Status.NodeName, 0.2, nil)
		start(f, []v1beta1.NodeClaim{claim})
	}
	cloud := &stack.PanickingCatalog{Cloud: f.Cloud}
	clk := testingclock.NewFakeClock(time.Now())
	d := stack.NewDisruption(t, f.Env, cloud, clk)
	d.WaitFor(t, "both nodes run their pod", func(s state.Snapshot) bool {
		return len(s.Nodes) == 2 && len(s.Nodes[0].Pods)+len(s.Nodes[1].Pods) == 2
	})
	if _, err := d.Pass(f.Ctx); err != nil {
		t.Fatal(err)
	}
	clk.Step(2 * time.Hour)
	cloud.Panics.Store(1)
	before := stack.RecoveredPanics(t, "disruption")
	if _, err := d.Pass(f.Ctx); err == nil || !cloud.Panicked() {
		t.Fatalf("the pass that met the panic returned %v; want the panic as its error", err)
	}
	if got := stack.RecoveredPanics(t, "disruption") - before; got != 1 {
		t.Fatalf("stratos_controller_panics_total{controller=disruption} rose by %v, want 1", got)
	}
	if _, err := d.Pass(f.Ctx); err != nil {
		t.Fatalf("the pass after the panic: %v", err)
	}
	f.Eventually("the next pass consolidates the two nodes into one", func() bool {
		given := 0
		for _, c := range f.Claims("web") {
			if c.Spec.DesiredState == v1beta1.DesiredStandby {
				given++
			}
		}
		return given >= 1
	})
}

// Consolidation waits while pods the pool would serve are pending: the burst is still
// landing, and its nodes only look under-used. Two nodes at 30% could become one, but a
// pod waits for a node of the pool; once it no longer waits, they do. On main before
// the fix consolidation went ahead and evicted pods while others still waited.
func TestConsolidationWaitsWhileThePoolsPodsArePending(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 2, idleOnRealTime)
	var loadedClaims []*v1beta1.NodeClaim
	for i, claim := range f.WaitForPhase("web", 2, v1beta1.PhaseStandby) {
		loaded(f, fmt.Sprintf("web-%d", i), claim.Status.NodeName, 0.3, nil)
		loadedClaims = append(loadedClaims, start(f, []v1beta1.NodeClaim{claim})[0])
	}
	waiting := podOn(f, "waiting", "", func(p *corev1.Pod) {
		p.Spec.Tolerations = nil
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
	})
	waiting.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	if err := f.Env.Client.Status().Update(f.Ctx, waiting); err != nil {
		t.Fatal(err)
	}

	clk := testingclock.NewFakeClock(time.Now())
	d := stack.NewDisruption(t, f.Env, f.Cloud, clk)
	d.WaitFor(t, "both nodes run their pod and a pod waits", func(s state.Snapshot) bool { return nodesWithOnePod(s) == 2 && len(s.Pending) == 1 })
	givenBack := func() int { // to standby, or away as the warm pool is full
		n := 0
		for _, c := range loadedClaims {
			now := &v1beta1.NodeClaim{}
			err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(c), now)
			if apierrors.IsNotFound(err) || now.Spec.DesiredState != v1beta1.DesiredRunning || !now.DeletionTimestamp.IsZero() {
				n++
			}
		}
		return n
	}
	for range 2 {
		if _, err := d.Pass(f.Ctx); err != nil {
			t.Fatal(err)
		}
		clk.Step(2 * time.Hour)
	}
	if n := givenBack(); n != 0 {
		t.Fatalf("%d nodes were consolidated while a pod of the pool was pending", n)
	}

	deletePod(f, waiting)
	d.WaitFor(t, "no pod waits", func(s state.Snapshot) bool { return len(s.Pending) == 0 })
	if _, err := d.Pass(f.Ctx); err != nil {
		t.Fatal(err)
	}
	if n := givenBack(); n != 1 {
		t.Fatalf("%d nodes were consolidated once no pod waited, want 1", n)
	}
}

// After a change of leader, disruption decides nothing before its cluster state holds
// everything the informers list. Here the new leader's informers cannot list the pods
// yet: it sees a running node with no pod, and not the pod that waits for that node's
// room. Its passes leave the node alone; once the pods are listed, the waiting pod keeps
// the node. On main before the change, the pass gave the node back on half a picture,
// and provisioning would have started a node again for the pod.
func TestDisruptionWaitsForTheClusterStateToSync(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 1, idleOnRealTime)
	claim := runningNodes(f, "web", 1)[0]
	waiting := podOn(f, "waiting", "", func(p *corev1.Pod) { p.Spec.Tolerations = nil })
	waiting.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	if err := f.Env.Client.Status().Update(f.Ctx, waiting); err != nil {
		t.Fatal(err)
	}

	clk := testingclock.NewFakeClock(time.Now())
	d, release := stack.NewDisruptionHoldingPods(t, f.Env, f.Cloud, clk)
	twoPasses := func() { // the first sees the node, the second finds it settled
		t.Helper()
		for range 2 {
			if _, err := d.Pass(f.Ctx); err != nil {
				t.Fatal(err)
			}
			clk.Step(2 * time.Hour)
		}
	}
	d.WaitFor(t, "the new leader sees the running node, and no pod", func(s state.Snapshot) bool {
		return len(s.Nodes) == 1 && len(s.All) >= 1 && len(s.Pending) == 0
	})
	if d.State.HasSynced() {
		t.Fatal("the cluster state says it synced while its pods are not listed")
	}
	twoPasses()
	if got := f.Claim(claim.Name).Spec.DesiredState; got != v1beta1.DesiredRunning {
		t.Fatalf("disruption acted before its cluster state synced: the node is asked to be %s", got)
	}

	release()
	d.WaitFor(t, "the pods are listed and the pod waits", func(s state.Snapshot) bool { return d.State.HasSynced() && len(s.Pending) == 1 })
	twoPasses()
	if got := f.Claim(claim.Name).Spec.DesiredState; got != v1beta1.DesiredRunning {
		t.Fatalf("the node the waiting pod needs is asked to be %s", got)
	}
	f.CheckInvariants()
}

package disruption_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// setUnhealthy makes the claim's Node unhealthy as node repair judges it — its Ready
// condition Unknown for an hour, longer than the pool's notReadyAfter (30m by default),
// as kube-controller-manager writes it for a kubelet that stopped posting — or Ready
// again, through the Node's status subresource, and waits until the lifecycle
// controller has marked the claim so (Unhealthy True, reason NotReady; or False, reason
// Healthy). The fake kubelet posts a Node's status only when its machine's phase or
// images change, so the Node keeps what the test wrote.
func setUnhealthy(f *stack.Fixture, name string, status metav1.ConditionStatus) {
	f.T.Helper()
	claim := f.Claim(name)
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
		Message: "Kubelet stopped posting node status.", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}
	reason := "NotReady"
	if status == metav1.ConditionFalse {
		ready = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet is posting ready status", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}
		reason = "Healthy"
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := f.Node(claim.Status.NodeName)
		base := node.DeepCopy()
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == corev1.NodeReady {
				node.Status.Conditions[i] = ready
			}
		}
		return f.Env.Client.Status().Patch(f.Ctx, node, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		f.T.Fatalf("writing the Ready condition of Node %s: %v", claim.Status.NodeName, err)
	}
	f.Eventually(fmt.Sprintf("claim %s is Unhealthy=%s (%s)", name, status, reason), func() bool {
		c := meta.FindStatusCondition(f.Claim(name).Status.Conditions, v1beta1.ConditionUnhealthy)
		return c != nil && c.Status == status && c.Reason == reason
	})
}

// setPaused pauses or resumes the pool: while it is paused, disruption decides nothing
// for it, so that a test can mark several claims at once. A pause waits until the
// operator's cache shows it (the pool controller reports it in the Degraded
// condition, from the cache disruption reads pools from).
func setPaused(f *stack.Fixture, pool string, paused bool) {
	f.T.Helper()
	stack.Patch(f, &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pool}}, func(p *v1beta1.NodePool) { p.Spec.Paused = paused })
	if !paused {
		return
	}
	f.Eventually("the operator sees the pause", func() bool {
		p := &v1beta1.NodePool{}
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: pool}, p); err != nil {
			return false
		}
		c := meta.FindStatusCondition(p.Status.Conditions, v1beta1.ConditionDegraded)
		return c != nil && c.Reason == nodepool.ReasonPaused && c.ObservedGeneration == p.Generation
	})
}

// idleForAnHour keeps a pool's empty nodes running for an hour.
func idleForAnHour(p *v1beta1.NodePool) {
	p.Spec.Disruption.ConsolidateAfter = &v1beta1.Duration{Duration: time.Hour}
}

// mostRepairedAtOnce is the largest number of the named claims that were going (asked
// to be terminated, or deleted) and not gone yet at one time, and how many went, as the
// recorded changes show them in the API server's order.
func mostRepairedAtOnce(changes *claimChanges, names []string) (most, went int) {
	changes.mu.Lock()
	defer changes.mu.Unlock()
	watched := map[string]bool{}
	for _, n := range names {
		watched[n] = true
	}
	going := map[string]bool{}
	for _, ch := range changes.changes {
		name := ch.claim.Name
		if !watched[name] {
			continue
		}
		switch {
		case ch.kind == watch.Deleted:
			if going[name] {
				went++
			}
			delete(going, name)
		case ch.claim.Spec.DesiredState == v1beta1.DesiredTerminated || !ch.claim.DeletionTimestamp.IsZero():
			going[name] = true
		}
		most = max(most, len(going))
	}
	return most, went
}

// runningPool makes a pool of n running nodes that run no workload and are left alone.
func runningPool(f *stack.Fixture, name string, n int) []*v1beta1.NodeClaim {
	f.T.Helper()
	f.Pool(name, int32(n), idleForAnHour)
	return start(f, f.WaitForPhase(name, n, v1beta1.PhaseStandby))
}

func names(claims []*v1beta1.NodeClaim) []string {
	out := make([]string, 0, len(claims))
	for _, c := range claims {
		out = append(out, c.Name)
	}
	return out
}

// An unhealthy node that holds a pod, one of the pool's three running nodes, is
// repaired: a standby node replaces it before it drains, though the pool's budgets allow
// no disruption, with an Unhealthy Event and a repair counted. Without repair handling
// the node stays. (A pool's only running node is never repaired: one of one is more
// than half.)
func TestAnUnhealthyNodeIsReplaced(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("repair", 3, func(p *v1beta1.NodePool) {
		idleForAnHour(p)
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "0"}}
	})
	nodes := runningNodes(f, "repair", 3)
	claim := nodes[0]
	pod := loaded(f, "web-0", claim.Status.NodeName, 0.5, nil)
	for i, other := range nodes[1:] { // no room for web-0 on the others
		loaded(f, fmt.Sprintf("web-%d", i+1), other.Status.NodeName, 0.6, nil)
	}
	standbyBeside(f, "repair", claim.Name)
	setUnhealthy(f, claim.Name, metav1.ConditionTrue)

	replacement := replacedBeforeDraining(f, claim, disruption.ReasonUnhealthy)
	if !running(f, replacement) {
		t.Fatalf("the replacement %s does not run", replacement)
	}
	if !podGone(f, pod) {
		t.Fatal("the unhealthy node went and its pod is still there")
	}
	if got := stack.Counter(t, "stratos_node_repairs_total", map[string]string{"nodepool": "repair", "reason": "NotReady"}); got != 1 {
		t.Fatalf("stratos_node_repairs_total{nodepool=repair,reason=NotReady} is %v, want 1", got)
	}
	wantDecisions(t, "repair", disruption.ReasonUnhealthy, map[string]float64{"replace": 1, "terminate": 1})
	f.CheckInvariants()
}

// Three of a pool's five nodes are unhealthy: more than half, an outage; none is
// repaired, and the pool says so. Once one of them recovers, two of five are: the
// other two are repaired one at a time (20% of five nodes rounds down, to the least of
// one).
func TestNoRepairWhileMoreThanHalfAreUnhealthy(t *testing.T) {
	f := stack.NewFixture(t, nil)
	claims := runningPool(f, "repair-half", 5)
	setPaused(f, "repair-half", true)
	sick := claims[:3]
	for _, c := range sick {
		setUnhealthy(f, c.Name, metav1.ConditionTrue)
	}
	changes := watchClaims(f)
	setPaused(f, "repair-half", false)

	f.Eventually("the pool says repairs are held", func() bool { return f.EventSeen("repair-half", disruption.ReasonRepairsHeld) })
	note, _ := f.EventNote("repair-half", disruption.ReasonRepairsHeld)
	t.Logf("%s: %s", disruption.ReasonRepairsHeld, note)
	for _, c := range sick {
		stillRuns(f, c.Name, "3 of 5 nodes are unhealthy")
	}

	setUnhealthy(f, sick[0].Name, metav1.ConditionFalse)
	// The claims' watch, which the count below reads, tells of the removals a little
	// after the API server does.
	f.Eventually("the two unhealthy nodes are repaired, and the watch has seen them go", func() bool {
		_, went := mostRepairedAtOnce(changes, names(sick))
		return gone(f, sick[1].Name) && gone(f, sick[2].Name) && went >= 2
	})
	stillRuns(f, sick[0].Name, "the node that recovered")
	if most, went := mostRepairedAtOnce(changes, names(sick)); most != 1 || went != 2 {
		t.Fatalf("%d nodes were repaired at once (%d in all); want one at a time, two in all", most, went)
	}
	f.CheckInvariants()
}

// Three of a pool's ten nodes are unhealthy: 20% of ten, two, are repaired at once, and
// the third once one of them is gone. The cloud refuses to terminate until two are
// under way: an empty node's repair takes a fraction of a second at the fixture's time
// scale, so otherwise the first could be gone before the second is asked to go, and
// the two would not be seen at once though the controller allowed them.
func TestAFifthOfThePoolIsRepairedAtOnce(t *testing.T) {
	f := stack.NewFixture(t, nil)
	claims := runningPool(f, "repair-fifth", 10)
	setPaused(f, "repair-fifth", true)
	sick := claims[:3]
	for _, c := range sick {
		setUnhealthy(f, c.Name, metav1.ConditionTrue)
	}
	repairs := map[string]string{"nodepool": "repair-fifth", "reason": "NotReady"}
	before := stack.Counter(t, "stratos_node_repairs_total", repairs) // nonzero only under -count
	changes := watchClaims(f)
	f.Cloud.SetFaults(fakecloud.Faults{Errors: map[string]fakecloud.ErrorFault{cloudprovider.OpTerminate: {Probability: 1}}})
	setPaused(f, "repair-fifth", false)

	f.Eventually("two unhealthy nodes are repaired at once", func() bool {
		most, _ := mostRepairedAtOnce(changes, names(sick))
		return most >= 2
	})
	f.Cloud.SetFaults(fakecloud.Faults{})
	// The claims' watch, which the count below reads, tells of the removals a little
	// after the API server does (a run saw 2 of 3 there, all 3 gone from the API).
	f.Eventually("the three unhealthy nodes are repaired, and the watch has seen them go", func() bool {
		for _, c := range sick {
			if !gone(f, c.Name) {
				return false
			}
		}
		_, went := mostRepairedAtOnce(changes, names(sick))
		return went >= 3
	})
	if most, went := mostRepairedAtOnce(changes, names(sick)); most != 2 || went != 3 {
		t.Fatalf("%d nodes were repaired at once (%d in all); want two at once, three in all", most, went)
	}
	for _, c := range claims[3:] {
		stillRuns(f, c.Name, fmt.Sprintf("healthy node %s", c.Name))
	}
	if got := stack.Counter(t, "stratos_node_repairs_total", repairs) - before; got != 3 {
		t.Fatalf("stratos_node_repairs_total grew by %v, want 3", got)
	}
	f.CheckInvariants()
}

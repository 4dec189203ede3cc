package warmpool_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/stack"
)

// The node repair tests run with a resync of claims far longer than a test: a claim
// turns Unhealthy at the moment its Node's toleration runs out only if the lifecycle
// controller asks to be woken then, as nothing else brings the claim back.
func newRepairFixture(t *testing.T) *fixture {
	return newFixture(t, func(o *nodeclaim.Options) { o.ResyncInterval = 10 * time.Minute })
}

// repairTune gives a pool a short notReadyAfter, and keeps its empty running nodes from
// being given back during the test.
func repairTune(notReadyAfter time.Duration, more func(*v1beta1.NodePool)) func(*v1beta1.NodePool) {
	return func(p *v1beta1.NodePool) {
		p.Spec.Repair.NotReadyAfter = v1beta1.NewDuration(notReadyAfter)
		p.Spec.Disruption.ConsolidateAfter = v1beta1.NewDuration(time.Hour)
		if more != nil {
			more(p)
		}
	}
}

// setNodeCondition writes a condition into the Node's status, by the status subresource,
// as kube-controller-manager's node lifecycle controller does (Ready Unknown for a
// kubelet that stopped posting) or node-problem-detector (KernelDeadlock). The fake
// kubelet posts a Node's status only when its machine's phase or images change, so a
// running Node without pods keeps what the test wrote.
func (f *fixture) setNodeCondition(nodeName string, c corev1.NodeCondition) {
	f.T.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := f.Node(nodeName)
		base := node.DeepCopy()
		replaced := false
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == c.Type {
				node.Status.Conditions[i], replaced = c, true
			}
		}
		if !replaced {
			node.Status.Conditions = append(node.Status.Conditions, c)
		}
		return f.Env.Client.Status().Patch(f.Ctx, node, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		f.T.Fatalf("writing condition %s of Node %s: %v", c.Type, nodeName, err)
	}
}

// readyUnknown is the Ready condition the node lifecycle controller writes for a kubelet
// that stopped posting, since then.
func readyUnknown(since time.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
		Message: "Kubelet stopped posting node status.", LastHeartbeatTime: metav1.NewTime(since), LastTransitionTime: metav1.NewTime(since)}
}

// unhealthyOf returns the claim's Unhealthy condition, or nil.
func (f *fixture) unhealthyOf(name string) *metav1.Condition {
	return meta.FindStatusCondition(f.Claim(name).Status.Conditions, v1beta1.ConditionUnhealthy)
}

// waitUnhealthy waits until the claim's Unhealthy condition has status and reason.
func (f *fixture) waitUnhealthy(name string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	f.T.Helper()
	var c *metav1.Condition
	f.Eventually(fmt.Sprintf("claim %s is Unhealthy=%s (%s)", name, status, reason), func() bool {
		c = f.unhealthyOf(name)
		return c != nil && c.Status == status && c.Reason == reason
	})
	return c
}

// otherStandby waits for a claim of the pool other than except standing by with a Node.
func (f *fixture) otherStandby(pool, except string) *v1beta1.NodeClaim {
	f.T.Helper()
	var found *v1beta1.NodeClaim
	f.Eventually("pool "+pool+" has another standby claim", func() bool {
		for _, c := range f.Claims(pool) {
			if c.Name != except && c.Status.Phase == v1beta1.PhaseStandby && c.Status.NodeName != "" {
				found = &c
				return true
			}
		}
		return false
	})
	return found
}

func unhealthyGauge(t *testing.T, pool string) float64 {
	t.Helper()
	return stack.Metric(t, "stratos_nodepool_unhealthy_nodes", map[string]string{"nodepool": pool}).GetGauge().GetValue()
}

// A running claim whose Node's Ready condition stays Unknown for longer than the pool's
// notReadyAfter turns Unhealthy (reason NotReady) once that time has passed, not before,
// with a Warning Event; Node heartbeats meanwhile write nothing; it turns back to False
// (Healthy) when the Node is Ready again. A standby claim's Node, NotReady by design, is
// never judged.
func TestNodeRepairMarksAnUnhealthyRunningNodeAndNotAStandbyOne(t *testing.T) {
	// A claim that just began to run looks at its Node's reservation every 250 ms for
	// state.BindGrace and a second more: the toleration ends after that, so that only the
	// lifecycle controller's wake-up at the due moment can bring the claim back then.
	const notReadyAfter = state.BindGrace + 3*time.Second
	f := newRepairFixture(t)
	const pool = "repair-notready"
	claim := f.runningClaim(pool, repairTune(notReadyAfter, nil))
	standby := f.otherStandby(pool, claim.Name)

	// The standby claim's Node has not posted for an hour: were it judged, it would be
	// unhealthy at once, long before the running one.
	f.setNodeCondition(standby.Status.NodeName, readyUnknown(time.Now().Add(-time.Hour)))
	marked := time.Now()
	f.setNodeCondition(claim.Status.NodeName, readyUnknown(marked))

	turned := f.waitUnhealthy(claim.Name, metav1.ConditionTrue, "NotReady")
	// Times on the API are whole seconds: the Node's transition reads as marked, truncated.
	if due := marked.Truncate(time.Second).Add(notReadyAfter); turned.LastTransitionTime.Time.Before(due) {
		t.Errorf("the claim turned Unhealthy at %s, before its Node had been Unknown for %s (at %s)", turned.LastTransitionTime.Time, notReadyAfter, due)
	}
	for _, want := range []string{claim.Status.NodeName, "Ready=Unknown", "node repair replaces it"} {
		if !strings.Contains(turned.Message, want) {
			t.Errorf("the Unhealthy condition says %q; want it to say %q", turned.Message, want)
		}
	}
	f.WaitForEvent(claim.Name, nodeclaim.ReasonNodeUnhealthy)
	if note, _ := f.EventNote(claim.Name, nodeclaim.ReasonNodeUnhealthy); note != turned.Message {
		t.Errorf("the %s Event says %q; want the condition's message %q", nodeclaim.ReasonNodeUnhealthy, note, turned.Message)
	}

	f.consistently("the standby claim is not Unhealthy", 3*time.Second, func() bool {
		c := f.unhealthyOf(standby.Name)
		return c == nil && f.Claim(standby.Name).Status.Phase == v1beta1.PhaseStandby
	})

	// A heartbeat (the node lifecycle controller renewing nothing but the heartbeat time)
	// does not reconcile the claim, and an unchanged verdict is not written again.
	writes := f.Op.Writes.ForObject(claim.Name)["patch NodeClaim/status"]
	node := f.Node(claim.Status.NodeName)
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			c.LastHeartbeatTime = metav1.NewTime(time.Now())
			f.setNodeCondition(node.Name, c)
		}
	}
	f.consistently("the claim's status is not written again", time.Second, func() bool {
		return f.Op.Writes.ForObject(claim.Name)["patch NodeClaim/status"] == writes
	})

	f.setNodeCondition(claim.Status.NodeName, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()})
	f.waitUnhealthy(claim.Name, metav1.ConditionFalse, nodeclaim.ReasonHealthy)
	f.WaitForEvent(claim.Name, nodeclaim.ReasonNodeHealthy)
}

// A condition the pool's repair names (KernelDeadlock True, as node-problem-detector
// reports it) held for its toleration makes the running claim Unhealthy, with the
// condition's type as the reason, though its Node stays Ready.
func TestNodeRepairMarksANodeWithAConfiguredCondition(t *testing.T) {
	const after = 2 * time.Second
	f := newRepairFixture(t)
	claim := f.runningClaim("repair-condition", repairTune(time.Hour, func(p *v1beta1.NodePool) {
		p.Spec.Repair.Conditions = []v1beta1.RepairCondition{{Type: "KernelDeadlock", Status: "True", After: v1beta1.Duration{Duration: after}}}
	}))
	marked := time.Now()
	f.setNodeCondition(claim.Status.NodeName, corev1.NodeCondition{Type: "KernelDeadlock", Status: corev1.ConditionTrue, Reason: "DockerHung",
		Message: "task docker:7 blocked for more than 300 seconds.", LastHeartbeatTime: metav1.NewTime(marked), LastTransitionTime: metav1.NewTime(marked)})

	turned := f.waitUnhealthy(claim.Name, metav1.ConditionTrue, "KernelDeadlock")
	if due := marked.Truncate(time.Second).Add(after); turned.LastTransitionTime.Time.Before(due) {
		t.Errorf("the claim turned Unhealthy at %s, before KernelDeadlock had held for %s (at %s)", turned.LastTransitionTime.Time, after, due)
	}
	if !nodeReady(f.Node(claim.Status.NodeName)) {
		t.Error("the Node is not Ready: the test meant the condition alone to count")
	}
}

// When more than half of a pool's running nodes are unhealthy, node repair holds back:
// the pool is Degraded with reason NodesUnhealthy, saying how many, with a Warning Event,
// and stratos_nodepool_unhealthy_nodes counts them. Once one is healthy again, half is
// not more than half, and the pool is no longer Degraded for it.
func TestNodeRepairReportsAnOutageWhenMoreThanHalfAreUnhealthy(t *testing.T) {
	f := newRepairFixture(t)
	const pool = "repair-outage"
	f.Pool(pool, 2, repairTune(2*time.Second, nil))
	var running []*v1beta1.NodeClaim
	for _, c := range f.WaitForPhase(pool, 2, v1beta1.PhaseStandby) {
		f.SetDesired(c.Name, v1beta1.DesiredRunning)
		running = append(running, f.WaitForClaim(c.Name, v1beta1.PhaseRunning))
	}
	if f.poolDegraded(pool, nodepool.ReasonNodesUnhealthy) != nil {
		t.Fatal("the pool is Degraded NodesUnhealthy before any node is")
	}

	// Both at once, as a fault of the network or the zone would have it. Two writes are
	// never at once for a running operator: one that saw the first Node's write and not
	// yet the second's judged one of two unhealthy and replaced it (seen in a fresh-clone
	// CI run). So the operator is down for the writes, and comes back to both.
	f.Op.Stop()
	since := time.Now().Add(-time.Minute)
	for _, c := range running {
		f.setNodeCondition(c.Status.NodeName, readyUnknown(since))
	}
	f.RestartOperator(f.Opts)
	var degraded *metav1.Condition
	f.Eventually("the pool is Degraded NodesUnhealthy", func() bool {
		degraded = f.poolDegraded(pool, nodepool.ReasonNodesUnhealthy)
		return degraded != nil
	})
	if want := "2 of the pool's 2 running nodes are unhealthy, more than half: node repair holds back"; !strings.HasPrefix(degraded.Message, want) {
		t.Errorf("the pool says %q; want it to begin %q", degraded.Message, want)
	}
	f.WaitForEvent(pool, nodepool.ReasonNodesUnhealthy)
	if note, _ := f.EventNote(pool, nodepool.ReasonNodesUnhealthy); note != degraded.Message {
		t.Errorf("the pool's %s Event says %q; want the condition's message %q", nodepool.ReasonNodesUnhealthy, note, degraded.Message)
	}
	if n := unhealthyGauge(t, pool); n != 2 {
		t.Errorf("stratos_nodepool_unhealthy_nodes{nodepool=%q} = %v, want 2", pool, n)
	}

	f.setNodeCondition(running[0].Status.NodeName, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()})
	// With one of two unhealthy, repair may replace that one at once (its Node has been
	// unready for a minute), so the gauge may pass 1 on its way to 0 before a look sees it.
	f.Eventually("the pool is no longer Degraded NodesUnhealthy", func() bool {
		return f.poolDegraded(pool, nodepool.ReasonNodesUnhealthy) == nil && unhealthyGauge(t, pool) <= 1
	})
}

// A pool whose repair is disabled judges nothing: its running claim whose Node is
// Unknown stays without an Unhealthy condition, and the pool reports no outage, while
// the same Node in a pool that repairs turns Unhealthy.
func TestNodeRepairDisabledMarksNothing(t *testing.T) {
	const notReadyAfter = time.Second
	f := newRepairFixture(t)
	repaired := f.runningClaim("repair-on", repairTune(notReadyAfter, nil))
	left := f.runningClaim("repair-off", repairTune(notReadyAfter, func(p *v1beta1.NodePool) { p.Spec.Repair.Enabled = ptr.To(false) }))

	since := time.Now()
	f.setNodeCondition(left.Status.NodeName, readyUnknown(since))
	f.setNodeCondition(repaired.Status.NodeName, readyUnknown(since))
	f.waitUnhealthy(repaired.Name, metav1.ConditionTrue, "NotReady")
	f.consistently("the claim of the pool that does not repair has no Unhealthy condition", 2*notReadyAfter, func() bool {
		return f.unhealthyOf(left.Name) == nil
	})
	if f.poolDegraded("repair-off", nodepool.ReasonNodesUnhealthy) != nil {
		t.Error("the pool that does not repair reports an outage")
	}
	if n := unhealthyGauge(t, "repair-off"); n != 0 {
		t.Errorf("stratos_nodepool_unhealthy_nodes{nodepool=\"repair-off\"} = %v, want 0", n)
	}
}

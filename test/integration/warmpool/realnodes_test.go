package warmpool_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/sim/ccm"
	"github.com/stratos-sh/stratos/test/stack"
)

// runCloudControllerManager runs the cloud controller manager's node lifecycle controller
// against the fixture's cloud, checking the Nodes every period, until stop is called.
func (f *fixture) runCloudControllerManager(period time.Duration) (stop func()) {
	f.T.Helper()
	kube, err := kubernetes.NewForConfig(f.Env.Config)
	if err != nil {
		f.T.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.Ctx)
	done := make(chan error, 1)
	go func() { done <- ccm.Run(ctx, kube, f.Cloud.Instances, period) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			f.T.Errorf("the cloud controller manager: %v", err)
		}
	}
	f.T.Cleanup(func() { cancel() })
	return stop
}

// The taints a real cluster puts on the Node of a stopped instance — the cloud
// controller manager's shutdown taint, the node lifecycle controller's unreachable ones —
// do not hold back its start: the claim runs once the Node reports Ready, and Stratos
// lifts the shutdown taint with its own, without waiting for the cloud controller
// manager's next pass.
func TestTaintsOfAStoppedNodeDoNotHoldBackItsStart(t *testing.T) {
	f := newFixture(t, nil)
	// A ceiling of 2 keeps the claim asked to run beside the replacement the pool warms.
	f.Pool("taints", 1, func(p *v1beta1.NodePool) { p.Spec.Standby.Max = ptrTo[int32](2) })
	claim := f.WaitForPhase("taints", 1, v1beta1.PhaseStandby)[0]

	stopCCM := f.runCloudControllerManager(100 * time.Millisecond)
	f.Eventually("the cloud controller manager taints the stopped Node", func() bool {
		return hasTaint(f.Node(claim.Status.NodeName), cloudproviderapi.TaintNodeShutdown)
	})
	// Its next pass is far off now: only Stratos can lift the taint before it.
	stopCCM()
	// What kube-controller-manager's node lifecycle controller adds once the kubelet of
	// a stopped instance has stopped posting; nothing runs it here.
	node := f.Node(claim.Status.NodeName)
	stack.Patch(f.Fixture, node, func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints,
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: time.Now()}})
	})
	if !f.Claim(claim.Name).DeletionTimestamp.IsZero() {
		t.Fatal("the taints of a stopped Node made Stratos remove its claim")
	}

	f.SetDesired(claim.Name, v1beta1.DesiredRunning)
	running := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
	f.assertRunning(running)
	node = f.Node(running.Status.NodeName)
	if hasTaint(node, cloudproviderapi.TaintNodeShutdown) {
		t.Fatalf("the running Node still has the shutdown taint: %v", node.Spec.Taints)
	}
	// The node lifecycle controller's own taints are its to lift, at the Node's next
	// status post; Stratos leaves them alone and counts the Node as Ready capacity.
	if !hasTaint(node, corev1.TaintNodeUnreachable) {
		t.Fatalf("Stratos removed the node lifecycle controller's taints: %v", node.Spec.Taints)
	}
}

// A Node deleted while its instance is stopped comes back when the instance starts: the
// kubelet registers it again, and Stratos adopts it, with the labels, taints and
// annotations it gave the Node the first time.
func TestANodeDeletedWhileStoppedIsAdoptedAgainAtTheStart(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) { o.ResyncInterval = 200 * time.Millisecond })
	taint := v1beta1.Taint{Key: "example.com/dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	f.Pool("deleted", 1, func(p *v1beta1.NodePool) {
		p.Spec.Standby.Max = ptrTo[int32](2)
		p.Spec.Template.Spec.Taints = []v1beta1.Taint{taint}
		p.Spec.Template.Annotations = map[string]string{"example.com/owner": "team-a"}
	})
	claim := f.WaitForPhase("deleted", 1, v1beta1.PhaseStandby)[0]
	node := f.Node(claim.Status.NodeName)
	if err := f.Env.Client.Delete(f.Ctx, node); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the Node is gone", func() bool {
		err := f.Env.Client.Get(f.Ctx, clientKey(node), &corev1.Node{})
		return apierrors.IsNotFound(err)
	})
	// Several resyncs of the standby claim pass without its Node.
	f.consistently("the claim stays in standby without its Node", time.Second, func() bool {
		c := f.Claim(claim.Name)
		return c.DeletionTimestamp.IsZero() && c.Status.Phase == v1beta1.PhaseStandby
	})

	f.SetDesired(claim.Name, v1beta1.DesiredRunning)
	running := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
	f.assertRunning(running)
	again := f.Node(running.Status.NodeName)
	if again.UID == node.UID {
		t.Fatal("the Node was never deleted")
	}
	if running.Status.InstanceID != claim.Status.InstanceID || running.Status.NodeName != claim.Status.NodeName {
		t.Fatalf("the claim moved from %s/%s to %s/%s", claim.Status.InstanceID, claim.Status.NodeName, running.Status.InstanceID, running.Status.NodeName)
	}
	if again.Labels[v1beta1.LabelNodeClaim] != claim.Name || again.Labels[v1beta1.LabelNodePool] != "deleted" || again.Labels[v1beta1.LabelInstanceCPU] == "" {
		t.Fatalf("the adopted Node's labels: %v", again.Labels)
	}
	if !slices.ContainsFunc(again.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(ptrTo(taint.Core())) }) {
		t.Fatalf("the adopted Node lacks the pool's taint: %v", again.Spec.Taints)
	}
	if again.Annotations["example.com/owner"] != "team-a" {
		t.Fatalf("the adopted Node lacks the pool's annotation: %v", again.Annotations)
	}
	f.WaitForEvent(claim.Name, nodeclaim.ReasonNodeRegisteredAgain)

	// And it stands by again as any other.
	f.SetDesired(claim.Name, v1beta1.DesiredStandby)
	f.assertStandby(f.WaitForClaim(claim.Name, v1beta1.PhaseStandby))
	f.CheckInvariants()
}

func ptrTo[T any](v T) *T { return &v }

package nodeclaim

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/harness"
)

// A Node patch that changes only a label is written once, though the kubelet updated
// the Node's status since the controller read it; one that changes the taints is locked
// to the version read, and applied again on what the Node is now.
func TestPatchNodeLocksOnlyTaintChanges(t *testing.T) {
	env := harness.StartT(t)
	ctx := context.Background()
	var patches atomic.Int32
	watching, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	counted := interceptor.NewClient(watching, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			patches.Add(1)
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	r := &Lifecycle{Client: counted}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	// heartbeat changes the Node's version behind the copy the controller holds.
	beats := 0
	heartbeat := func() {
		t.Helper()
		now := node.DeepCopy()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(node), now); err != nil {
			t.Fatal(err)
		}
		beats++
		now.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Message: fmt.Sprintf("heartbeat %d", beats)}}
		if err := env.Client.Status().Update(ctx, now); err != nil {
			t.Fatal(err)
		}
	}

	heartbeat()
	if err := r.patchNode(ctx, node, func(n *corev1.Node) bool {
		n.Labels = map[string]string{v1beta1.LabelState: string(v1beta1.PhaseWarmingUp)}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if n := patches.Swap(0); n != 1 {
		t.Fatalf("a label-only patch on a Node read before a heartbeat was written %d times, want once", n)
	}

	heartbeat()
	if err := r.patchNode(ctx, node, func(n *corev1.Node) bool {
		n.Spec.Taints = append(n.Spec.Taints, v1beta1.StandbyTaint)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if n := patches.Swap(0); n != 2 {
		t.Fatalf("a taint patch on a Node read before a heartbeat was written %d times, want a conflict and a retry", n)
	}
	got := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(node), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[v1beta1.LabelState] != string(v1beta1.PhaseWarmingUp) || !hasTaint(got, v1beta1.StandbyTaint) || len(got.Status.Conditions) != 1 {
		t.Fatalf("Node after the patches: labels %v, taints %v, conditions %v", got.Labels, got.Spec.Taints, got.Status.Conditions)
	}
}

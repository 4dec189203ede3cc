package fake

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// SetupWithManager runs the kubelet simulator in mgr: the Node loop, and the kubelets'
// part in pod deletion. A pod deleted on a Node whose instance runs goes away, as a real
// kubelet stops its containers and confirms the deletion; on a stopped instance it stays
// terminating, as nothing runs there to confirm it.
func (k *Kubelet) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.Add(k); err != nil {
		return err
	}
	terminating := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return !o.GetDeletionTimestamp().IsZero() && o.(*corev1.Pod).Spec.NodeName != ""
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("fake-kubelet-pods").
		For(&corev1.Pod{}, builder.WithPredicates(terminating)).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: 8}).
		Complete(reconcile.Func(k.finishPodDeletion))
}

// finishPodDeletion confirms the deletion of a terminating pod on a running instance.
func (k *Kubelet) finishPodDeletion(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := k.client.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pod.DeletionTimestamp.IsZero() || !k.cloud.runsNode(pod.Spec.NodeName) {
		return reconcile.Result{}, nil
	}
	err := k.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
	return reconcile.Result{}, client.IgnoreNotFound(err)
}

// runsNode reports whether the instance behind a Node name is running.
func (c *Cloud) runsNode(nodeName string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance(c.clock.Now())
	for _, inst := range c.instances {
		if inst.hostname == nodeName {
			return inst.State == cloudprovider.StateRunning
		}
	}
	return false
}

package simprovider

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// ownerMachine returns the CAPI Machine that owns obj (CAPI's Machine controller, or
// whoever made obj for the Machine, sets the reference), nil while none does.
func ownerMachine(ctx context.Context, c client.Client, obj client.Object) (*clusterv1.Machine, error) {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind != "Machine" || !isCAPIGroup(ref) {
			continue
		}
		machine := &clusterv1.Machine{}
		err := c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, machine)
		if err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if machine.UID != ref.UID {
			// A Machine of the same name, not the owner: the owner is gone.
			return nil, nil
		}
		return machine, nil
	}
	return nil, nil
}

func isCAPIGroup(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == clusterv1.GroupVersion.Group
}

// paused reports whether CAPI's pause applies to obj: its own paused annotation, or
// spec.paused of its Cluster.
func paused(ctx context.Context, c client.Client, obj client.Object, clusterName string) (bool, error) {
	if _, ok := obj.GetAnnotations()[clusterv1.PausedAnnotation]; ok {
		return true, nil
	}
	if clusterName == "" {
		return false, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: clusterName}, cluster); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return cluster.Spec.Paused != nil && *cluster.Spec.Paused, nil
}

// reportPaused sets obj's Paused condition, as CAPI's contracts ask providers to
// surface their pause, and writes it when it changed; conditions are obj's.
func reportPaused(ctx context.Context, c client.Client, obj client.Object, conditions *[]metav1.Condition, isPaused bool) error {
	base := obj.DeepCopyObject().(client.Object)
	condition := metav1.Condition{
		Type: clusterv1.PausedCondition, Status: metav1.ConditionFalse, Reason: clusterv1.NotPausedReason,
		ObservedGeneration: obj.GetGeneration(),
	}
	if isPaused {
		condition.Status, condition.Reason = metav1.ConditionTrue, clusterv1.PausedReason
		condition.Message = "the object or its Cluster is paused"
	}
	if !meta.SetStatusCondition(conditions, condition) {
		return nil
	}
	return c.Status().Patch(ctx, obj, client.MergeFrom(base))
}

// ofCluster maps a CAPI Cluster to the objects of a list kind that carry its cluster
// label, so that a Cluster's pause and unpause reach them.
func ofCluster(c client.Client, newList func() client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := newList()
		if err := c.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: obj.GetName()}); err != nil {
			logf.FromContext(ctx).Error(err, "Listing the objects of a Cluster failed", "cluster", obj.GetName())
			return nil
		}
		var requests []reconcile.Request
		_ = meta.EachListItem(list, func(item runtime.Object) error {
			o := item.(client.Object)
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			return nil
		})
		return requests
	}
}

package simprovider

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

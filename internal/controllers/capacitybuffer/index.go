package capacitybuffer

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
)

// Indexes of buffers in the cache. They are registered with the controller rather than
// in internal/indexes: indexing a kind starts its informer, which fails in a cluster
// without the CapacityBuffer CRD, where the controller does not run.
const (
	// indexPodTemplate indexes buffers by the PodTemplate they read: spec.podTemplateRef,
	// or the one Stratos makes for a scalableRef.
	indexPodTemplate = "capacitybuffer.podTemplate"
	// indexScalable indexes buffers by their scalableRef, as "group/Kind/name".
	indexScalable = "spec.scalableRef"
)

func scalableKey(group, kind, name string) string { return group + "/" + kind + "/" + name }

func registerIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &autoscalingv1beta1.CapacityBuffer{}, indexPodTemplate, func(o client.Object) []string {
		b := o.(*autoscalingv1beta1.CapacityBuffer)
		switch {
		case b.Spec.PodTemplateRef != nil:
			return []string{b.Spec.PodTemplateRef.Name}
		case b.Spec.ScalableRef != nil:
			return []string{ownedTemplateName(b.Name)}
		}
		return nil
	}); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &autoscalingv1beta1.CapacityBuffer{}, indexScalable, func(o client.Object) []string {
		ref := o.(*autoscalingv1beta1.CapacityBuffer).Spec.ScalableRef
		if ref == nil {
			return nil
		}
		return []string{scalableKey(scalableGroup(ref), ref.Kind, ref.Name)}
	})
}

// buffersOfTemplate maps a PodTemplate to the buffers that read it.
func (r *Reconciler) buffersOfTemplate(ctx context.Context, obj client.Object) []ctrl.Request {
	return r.buffersBy(ctx, obj.GetNamespace(), indexPodTemplate, obj.GetName())
}

// buffersOfWorkload maps a workload of the apps kind to the buffers that name it.
func (r *Reconciler) buffersOfWorkload(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []ctrl.Request {
		return r.buffersBy(ctx, obj.GetNamespace(), indexScalable, scalableKey(appsv1.GroupName, kind, obj.GetName()))
	}
}

func (r *Reconciler) buffersBy(ctx context.Context, namespace, index, value string) []ctrl.Request {
	buffers := &autoscalingv1beta1.CapacityBufferList{}
	if err := r.Client.List(ctx, buffers, client.InNamespace(namespace), client.MatchingFields{index: value}); err != nil {
		log.FromContext(ctx).Error(err, "Listing the buffers of an object", "index", index, "value", value)
		return nil
	}
	requests := make([]ctrl.Request, 0, len(buffers.Items))
	for i := range buffers.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&buffers.Items[i])})
	}
	return requests
}

// Installed reports whether the cluster serves CapacityBuffers of the version Stratos
// reads: without the CRD the controller does not run.
func Installed(mapper meta.RESTMapper) (bool, error) {
	_, err := mapper.RESTMapping(schema.GroupKind{Group: autoscalingv1beta1.Group, Kind: "CapacityBuffer"}, autoscalingv1beta1.GroupVersion.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

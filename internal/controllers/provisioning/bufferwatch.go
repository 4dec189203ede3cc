package provisioning

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
)

// WatchBuffers opens a batch whenever a CapacityBuffer or a PodTemplate changes: a
// buffer resolved, resized or deleted changes the room to keep, with no pod waiting to
// tell provisioning. The pass itself is skipped when what it reads did not change.
func (p *Provisioner) WatchBuffers(ctx context.Context, informers cache.Informers) error {
	trigger := func(any) { p.Trigger() }
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    trigger,
		UpdateFunc: func(_, obj any) { trigger(obj) },
		DeleteFunc: trigger,
	}
	for _, obj := range []client.Object{&autoscalingv1beta1.CapacityBuffer{}, &corev1.PodTemplate{}} {
		informer, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		if _, err := informer.AddEventHandler(handler); err != nil {
			return err
		}
	}
	return nil
}

package provisioning

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/api/v1beta1"
)

// WatchBuffers opens a batch whenever the room buffers need may have changed with no pod
// waiting to tell provisioning: a CapacityBuffer or a PodTemplate changed, and, while
// buffers keep room, a pod was bound (kube-scheduler may put a new pod straight into a
// buffer's room, which is then to be refilled), a Node or a claim went away, or a pool
// was created or changed. The pass itself is skipped when what it reads did not change
// (see fingerprint).
func (p *Provisioner) WatchBuffers(ctx context.Context, informers cache.Informers) error {
	trigger := func(any) { p.Trigger() }
	always := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    trigger,
		UpdateFunc: func(_, obj any) { trigger(obj) },
		DeleteFunc: trigger,
	}
	for _, obj := range []client.Object{&autoscalingv1beta1.CapacityBuffer{}, &corev1.PodTemplate{}} {
		if err := addHandler(ctx, informers, obj, always); err != nil {
			return err
		}
	}
	bound := toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(old, obj any) {
		before, ok1 := old.(*corev1.Pod)
		after, ok2 := obj.(*corev1.Pod)
		if ok1 && ok2 && before.Spec.NodeName == "" && after.Spec.NodeName != "" && p.keepingRoom() {
			p.Trigger()
		}
	}}
	if err := addHandler(ctx, informers, &corev1.Pod{}, bound); err != nil {
		return err
	}
	whileKeeping := func(any) {
		if p.keepingRoom() {
			p.Trigger()
		}
	}
	gone := toolscache.ResourceEventHandlerFuncs{DeleteFunc: whileKeeping}
	for _, obj := range []client.Object{&corev1.Node{}, &v1beta1.NodeClaim{}} {
		if err := addHandler(ctx, informers, obj, gone); err != nil {
			return err
		}
	}
	// A pool created or whose spec changed may take a buffer that fit no pool; its
	// status changes often, and tells nothing of the kind.
	changed := toolscache.ResourceEventHandlerFuncs{AddFunc: whileKeeping, UpdateFunc: func(old, obj any) {
		before, ok1 := old.(*v1beta1.NodePool)
		after, ok2 := obj.(*v1beta1.NodePool)
		if ok1 && ok2 && before.Generation != after.Generation {
			whileKeeping(obj)
		}
	}}
	return addHandler(ctx, informers, &v1beta1.NodePool{}, changed)
}

func addHandler(ctx context.Context, informers cache.Informers, obj client.Object, handler toolscache.ResourceEventHandler) error {
	informer, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	_, err = informer.AddEventHandler(handler)
	return err
}

// keepingRoom says whether the last pass kept room for any buffer.
func (p *Provisioner) keepingRoom() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.bufferMetrics) > 0
}

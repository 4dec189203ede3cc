package nodepool

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/nodeclass"
)

// SetupWithManager watches pools, their claims, their demand histories and their node
// classes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("nodepool").
		For(&v1beta1.NodePool{}).
		Owns(&v1beta1.NodeClaim{}).
		Owns(&v1beta1.NodePoolDemand{}). // a learned pool's history changed
		Watches(&v1beta1.NodeClaim{}, handler.Funcs{DeleteFunc: r.claimGone})
	for _, class := range nodeclass.Objects() {
		b = b.Watches(class, handler.EnqueueRequestsFromMapFunc(r.poolsOfClass))
	}
	if r.BufferRoom != nil {
		b = b.WatchesRawSource(source.Func(r.onBufferRoom))
	}
	if r.CalendarChanged != nil {
		b = b.WatchesRawSource(source.Func(r.onCalendarJump))
	}
	return b.Complete(r)
}

// claimGone meets the expectations of a deleted claim, and keeps it if it failed to warm
// up, for its pool's next pass to count; Owns brings its pool here.
func (r *Reconciler) claimGone(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[ctrl.Request]) {
	if claim, ok := e.Object.(*v1beta1.NodeClaim); ok {
		r.expectations.gone(claim.Spec.NodePool, claim.Name)
		if f, failed := failureOf(claim); failed {
			r.gone.add(claim.Spec.NodePool, f)
		}
	}
}

// requestsFor asks for a pass over each of pools.
func requestsFor(pools []v1beta1.NodePool) []ctrl.Request {
	requests := make([]ctrl.Request, 0, len(pools))
	for i := range pools {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&pools[i])})
	}
	return requests
}

// onCalendarJump queues every pool each time the calendar is set anew, until ctx ends.
func (r *Reconciler) onCalendarJump(ctx context.Context, queue workqueue.TypedRateLimitingInterface[ctrl.Request]) error {
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-r.CalendarChanged:
				pools := &v1beta1.NodePoolList{}
				if err := r.Client.List(ctx, pools); err != nil {
					log.FromContext(ctx).Error(err, "Listing the pools after the calendar changed")
					continue
				}
				for _, req := range requestsFor(pools.Items) {
					queue.Add(req)
				}
			}
		}
	}()
	return nil
}

// poolsOfClass maps a node class to the pools that use it.
func (r *Reconciler) poolsOfClass(ctx context.Context, class client.Object) []ctrl.Request {
	kind := class.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kinds, _, err := r.Client.Scheme().ObjectKinds(class)
		if err != nil || len(kinds) == 0 {
			return nil
		}
		kind = kinds[0].Kind
	}
	pools := &v1beta1.NodePoolList{}
	if err := r.Client.List(ctx, pools, client.MatchingFields{indexes.PoolNodeClass: indexes.NodeClassKey(kind, class.GetName())}); err != nil {
		log.FromContext(ctx).Error(err, "Listing the pools of a node class")
		return nil
	}
	return requestsFor(pools.Items)
}

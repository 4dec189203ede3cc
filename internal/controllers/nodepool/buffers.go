package nodepool

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/windows"
)

// withBufferRoom is the standby target raised by the standby nodes the pool's
// standby-capacity CapacityBuffers need (capacitybuffer.StandbyRoom, set by
// provisioning). An explicit standby.max bounds the raised target; without one the
// ceiling follows the target. The pool's limits bound it as any target (planPool).
func (r *Reconciler) withBufferRoom(pool *v1beta1.NodePool, targets windows.Targets, target int32) int32 {
	added := r.BufferRoom.For(pool.Name)
	if added <= 0 {
		return target
	}
	raised := target + added
	if pool.Spec.Standby.Max != nil {
		raised = min(raised, max(ptr.Deref(pool.Spec.Standby.Max, 0), targets.MinStandby, target))
	}
	return raised
}

// onBufferRoom queues a pool each time the standby room its buffers need changes.
func (r *Reconciler) onBufferRoom(ctx context.Context, queue workqueue.TypedRateLimitingInterface[ctrl.Request]) error {
	r.BufferRoom.OnChange(func(pool string) {
		if ctx.Err() == nil {
			queue.Add(ctrl.Request{NamespacedName: client.ObjectKey{Name: pool}})
		}
	})
	return nil
}

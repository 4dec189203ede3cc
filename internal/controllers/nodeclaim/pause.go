package nodeclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/indexes"
)

// ReasonPoolPaused is the Event of a claim whose next step waits for its pool to be
// resumed.
const ReasonPoolPaused = "PoolPaused"

// heldError says that a step would change a claim whose pool is paused.
type heldError struct {
	pool string
	// generation is the pool's when it was seen paused: a new pause is a new generation.
	generation int64
	action     string
}

func (e *heldError) Error() string {
	return fmt.Sprintf("NodePool %s is paused: %s waits until it is resumed", e.pool, e.action)
}

// hold returns a *heldError, naming action, when the claim's pool is paused. A paused
// pool's capacity stays as it is: the steps consult hold before each change they would
// make to a claim that is not being deleted, and wait when it says so. The changes are
// a cloud call that changes the instance (launch, start, stop), a drain begun or
// continued, and a removal for a timeout; a timeout that passed meanwhile applies once
// the pool is resumed. Everything else goes on: observing the instance and the Node,
// the phase changes that need no cloud call (a Node that turns Ready, a start already
// under way that completes), and removing a claim whose instance is gone, since its
// capacity is gone already. Deletion is not held: it is someone's explicit request, as
// is deleting the Node of a running instance (see keepsNode).
func (r *Lifecycle) hold(ctx context.Context, claim *v1beta1.NodeClaim, action string) error {
	pool := r.poolOf(ctx, claim)
	if pool == nil || !pool.Spec.Paused {
		return nil
	}
	return &heldError{pool: pool.Name, generation: pool.Generation, action: action}
}

// notePaused tells, once per pause and held action, why the claim waits. It is an Event
// rather than a condition: nothing is wrong with the claim, and a condition would cost
// every claim of the pool a write at the pause and another at the resumption.
func (r *Lifecycle) notePaused(claim *v1beta1.NodeClaim, held *heldError) {
	note := fmt.Sprintf("%d/%s", held.generation, held.action)
	if previous, seen := r.pauseNotes.Swap(claim.UID, note); seen && previous == note {
		return
	}
	r.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, ReasonPoolPaused, "Wait", held.Error())
}

// poolResumed passes only the updates that resume a pool: then its claims' held steps go on.
var poolResumed = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(e event.UpdateEvent) bool { return paused(e.ObjectOld) && !paused(e.ObjectNew) },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func paused(obj client.Object) bool {
	pool, ok := obj.(*v1beta1.NodePool)
	return ok && pool.Spec.Paused
}

// poolToClaims maps a pool to its claims.
func (r *Lifecycle) poolToClaims(ctx context.Context, pool client.Object) []ctrl.Request {
	claims := &v1beta1.NodeClaimList{}
	if err := r.Client.List(ctx, claims, client.MatchingFields{indexes.ClaimNodePool: pool.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "Listing the claims of a resumed pool", "nodepool", pool.GetName())
		return nil
	}
	requests := make([]ctrl.Request, 0, len(claims.Items))
	for _, c := range claims.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
	}
	return requests
}

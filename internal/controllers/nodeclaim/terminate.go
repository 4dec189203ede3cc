package nodeclaim

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// ReasonTerminating is the reason of the Terminating phase.
const ReasonTerminating = "Terminating"

// terminate runs when a claim is deleted: cordon the Node, drain it (PodDisruptionBudgets
// honoured until the pool's terminationGracePeriod), terminate the instance, delete the Node, and
// release the claim. A claim whose launch result was lost leaves its instance, tagged
// with the claim's name, to garbage collection. A Node deleted already is skipped; an
// instance that is not the cluster's holds the claim.
func (r *Lifecycle) terminate(ctx context.Context, claim *v1beta1.NodeClaim) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(claim, Finalizer) {
		return ctrl.Result{}, nil
	}
	before := claim.DeepCopy()
	result, done, err := r.terminateSteps(ctx, claim)
	if !done {
		if !equality.Semantic.DeepEqual(before.Status, claim.Status) {
			if patchErr := r.Client.Status().Patch(ctx, claim, client.MergeFrom(before)); patchErr != nil {
				return ctrl.Result{}, client.IgnoreNotFound(patchErr)
			}
		}
		return result, err
	}
	r.pauseNotes.Delete(claim.UID)
	base := claim.DeepCopy()
	controllerutil.RemoveFinalizer(claim, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}

// removeAsked deletes a claim asked to be terminated once nothing is left to drain:
// its Node is drained, or it is not running. The claim's termination then ends the
// instance. The deletion is made on the version read, so that a claim asked to run again
// meanwhile (a drain abandoned at the moment it ended) runs instead: the change wakes it.
func (r *Lifecycle) removeAsked(ctx context.Context, claim *v1beta1.NodeClaim, reason, note string) error {
	err := r.Client.Delete(ctx, claim, client.Preconditions{ResourceVersion: &claim.ResourceVersion})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting the claim asked to be terminated: %w", err)
	}
	r.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, reason, "Delete", note)
	return nil
}

// drainsFirst reports whether a claim in phase may run pods, so that a claim asked to be
// terminated drains before it is deleted.
func drainsFirst(phase v1beta1.NodeClaimPhase) bool {
	return phase == v1beta1.PhaseRunning || phase == v1beta1.PhaseDraining
}

// terminateSteps does what termination can do now and reports whether it is complete.
func (r *Lifecycle) terminateSteps(ctx context.Context, claim *v1beta1.NodeClaim) (ctrl.Result, bool, error) {
	node, err := r.nodeOf(ctx, claim)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if claim.Status.Phase != v1beta1.PhaseTerminating {
		if err := r.transition(ctx, claim, node, v1beta1.PhaseTerminating, ReasonTerminating, "Deleted; draining the Node and terminating the instance"); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	if claim.Status.InstanceID != "" {
		instance, gone, err := r.instanceOf(ctx, claim)
		if errors.Is(err, cloudprovider.ErrNotOwned) {
			// Stratos does not terminate an instance that is not the cluster's, nor release
			// the claim, which would leave it running unseen: the deletion waits, and says
			// so, until the tag is back or someone terminates the instance.
			r.ownershipLost(claim, err)
			return r.requeueWithin(r.Options.ResyncInterval), false, nil
		}
		if err != nil {
			return ctrl.Result{}, false, err
		}
		if !gone {
			// Only a running instance has pods to drain; a stopped one runs nothing.
			if node != nil && instance.State == cloudprovider.StateRunning {
				drained, result, err := r.drain(ctx, claim, node, claim.DeletionTimestamp.Time)
				if err != nil || !drained {
					return result, false, err
				}
			}
			if err := r.Cloud.Terminate(ctx, instance.ID); err != nil && !errors.Is(err, cloudprovider.ErrNotFound) {
				return ctrl.Result{}, false, fmt.Errorf("terminating instance %s: %w", instance.ID, err)
			}
		}
	}
	// The garbage collector would remove the pre-pull pod once the claim is gone; its
	// instance is gone already, so nothing would confirm a graceful deletion.
	if err := r.deletePrePull(ctx, claim, true); err != nil {
		return ctrl.Result{}, false, fmt.Errorf("deleting the pre-pull pod: %w", err)
	}
	r.warmupNotes.Delete(claim.UID)
	if node != nil {
		if err := r.Client.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, false, fmt.Errorf("deleting Node %s: %w", node.Name, err)
		}
	}
	return ctrl.Result{}, true, nil
}

package nodeclaim

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/nodeclass"
)

// Reasons of starts, stops and outside changes.
const (
	ReasonStopped          = "Stopped"
	ReasonStarting         = "Starting"
	ReasonGivingBack       = "GivingBack"
	ReasonGiveBackCanceled = "GiveBackCanceled"
	// ReasonDrainingAway: the claim is asked to be terminated; its Node drains first.
	ReasonDrainingAway   = "DrainingAway"
	ReasonStoppedOutside = "StoppedOutside"
	ReasonStartedOutside = "StartedOutside"
	// ReasonHibernationUnsupported: the node class asks for hibernation, but the
	// instance cannot hibernate, so it is stopped instead.
	ReasonHibernationUnsupported = "HibernationUnsupported"
)

// stop parks the Node, moves the claim to Stopping and asks the cloud to stop the
// instance, unless the claim's pool is paused. A failed call is redone by the Stopping step.
func (r *Lifecycle) stop(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node, reason, message string) error {
	if err := r.hold(ctx, claim, "the stop"); err != nil {
		return err
	}
	if err := r.transition(ctx, claim, node, v1beta1.PhaseStopping, reason, message); err != nil {
		return err
	}
	return r.stopInstance(ctx, claim)
}

// stopInstance asks the cloud to stop the claim's instance, hibernating it when the
// claim's node class asks for it. An instance that cannot hibernate, such as one
// launched before its class asked for hibernation (the class change drifts it, but it
// may stand by meanwhile), is stopped plainly rather than left running.
func (r *Lifecycle) stopInstance(ctx context.Context, claim *v1beta1.NodeClaim) error {
	hibernate := r.hibernates(ctx, claim)
	err := r.Cloud.Stop(ctx, claim.Status.InstanceID, hibernate)
	if !hibernate || !errors.Is(err, cloudprovider.ErrUnsupported) {
		return err
	}
	r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, ReasonHibernationUnsupported, "Stop",
		"Instance %s cannot hibernate (%v); stopping it instead", claim.Status.InstanceID, err)
	return r.Cloud.Stop(ctx, claim.Status.InstanceID, false)
}

// hibernates reports whether the claim's node class asks for hibernation. A class that
// cannot be read, because it is gone or the read failed, means a plain stop: every
// instance can stop, whereas one launched without hibernation refuses to hibernate, and
// a stop must not wait on the class, since the node stands by or is given back either way.
func (r *Lifecycle) hibernates(ctx context.Context, claim *v1beta1.NodeClaim) bool {
	class, err := nodeclass.Get(ctx, r.Client, claim.Spec.NodeClassRef)
	if err != nil {
		log.FromContext(ctx).V(1).Info("Reading the node class failed; stopping without hibernation", "nodeClass", claim.Spec.NodeClassRef.Name, "error", err.Error())
		return false
	}
	return nodeclass.Hibernates(class)
}

// stopping waits for the instance to stop; then the claim stands by.
func (r *Lifecycle) stopping(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
	instance, node, ok, err := r.observe(ctx, claim)
	if !ok {
		return false, ctrl.Result{}, err
	}
	if instance.State == cloudprovider.StateStopped {
		r.forcedStops.Delete(claim.UID)
		return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseStandby, ReasonStopped, "Instance stopped; standing by")
	}
	if handled, err := r.checkStopTimeout(ctx, claim, instance); handled || err != nil {
		return false, r.poll(), err
	}
	switch instance.State {
	case cloudprovider.StateRunning:
		if err := r.hold(ctx, claim, "the stop"); err != nil {
			return false, ctrl.Result{}, err
		}
		return false, r.poll(), r.stopInstance(ctx, claim)
	default:
		return false, r.poll(), nil
	}
}

// running drains the node when the claim is asked to stand by or to be terminated, and
// follows an instance stopped outside Stratos.
func (r *Lifecycle) running(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
	instance, node, ok, err := r.observe(ctx, claim)
	if !ok {
		return false, ctrl.Result{}, err
	}
	if desired := claim.Spec.DesiredState; desired == v1beta1.DesiredStandby || desired == v1beta1.DesiredTerminated {
		if err := r.hold(ctx, claim, "the drain"); err != nil {
			return false, ctrl.Result{}, err
		}
		reason, message := ReasonGivingBack, "Asked to stand by; draining the Node"
		if desired == v1beta1.DesiredTerminated {
			reason, message = ReasonDrainingAway, "Asked to be terminated; draining the Node first"
		}
		return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseDraining, reason, message)
	}
	if instance.State == cloudprovider.StateStopping || instance.State == cloudprovider.StateStopped {
		if err := r.followOutside(ctx, claim, v1beta1.DesiredStandby, ReasonStoppedOutside, fmt.Sprintf("Instance %s was stopped outside Stratos", instance.ID)); err != nil {
			return false, ctrl.Result{}, err
		}
		return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseStopping, ReasonStoppedOutside, "Following an outside stop")
	}
	if node != nil {
		if wait, err := r.liftReservation(ctx, claim, node); err != nil || wait > 0 {
			return false, ctrl.Result{RequeueAfter: wait}, err
		}
	}
	return false, r.requeueWithin(r.Options.ResyncInterval), nil
}

// draining evicts the Node's pods, then stops the instance, or, for a claim asked to be
// terminated, deletes the claim, whose termination then ends the instance. Asked to run
// again meanwhile, the node runs at once: a drain is undone until it ends.
func (r *Lifecycle) draining(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
	node, err := r.nodeOf(ctx, claim)
	if err != nil {
		return false, ctrl.Result{}, err
	}
	if claim.Spec.DesiredState == v1beta1.DesiredRunning {
		return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseRunning, ReasonGiveBackCanceled, "Asked to run again; the Node takes pods")
	}
	if err := r.hold(ctx, claim, "the drain"); err != nil {
		return false, ctrl.Result{}, err
	}
	if node != nil {
		done, result, err := r.drain(ctx, claim, node, claim.Status.LastPhaseChangeTime.Time)
		if err != nil || !done {
			return false, result, err
		}
	}
	if claim.Spec.DesiredState == v1beta1.DesiredTerminated {
		return false, ctrl.Result{}, r.removeAsked(ctx, claim, ReasonDrained, "Drained; terminating the instance")
	}
	return true, ctrl.Result{}, r.stop(ctx, claim, node, ReasonDrained, "Drained; stopping the instance")
}

// followOutside records an outside start or stop: an Event, and the claim's desired
// state moved to the truth, so that Stratos does not undo what an operator did.
func (r *Lifecycle) followOutside(ctx context.Context, claim *v1beta1.NodeClaim, desired v1beta1.DesiredState, reason, message string) error {
	r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, reason, "Follow", message)
	if claim.Spec.DesiredState == desired {
		return nil
	}
	base := claim.DeepCopy()
	claim.Spec.DesiredState = desired
	return r.Client.Patch(ctx, claim, client.MergeFrom(base))
}

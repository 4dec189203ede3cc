package nodeclaim

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// standby starts the instance when the claim is asked to run, and follows an instance
// started outside Stratos.
func (r *Lifecycle) standby(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
	if claim.Spec.DesiredState == v1beta1.DesiredRunning {
		// Pending pods wait on this start, so it goes first, without describing the
		// instance: starting a stopped instance is the common case, and starting a
		// running one does nothing. A refusal for capacity is final; any other error
		// (still stopping, gone, throttled) falls back to the full observation below.
		refused, err := r.start(ctx, claim, nil)
		if refused {
			return false, r.requeueWithin(r.Options.ResyncInterval), err
		}
		if err == nil {
			node, err := r.nodeOf(ctx, claim)
			if err != nil {
				return false, ctrl.Result{}, err
			}
			return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseStarting, ReasonStarting, "Starting the instance")
		}
	}
	instance, node, ok, err := r.observe(ctx, claim)
	if !ok {
		return false, ctrl.Result{}, err
	}
	if instance.State == cloudprovider.StateRunning || instance.State == cloudprovider.StatePending {
		if err := r.followOutside(ctx, claim, v1beta1.DesiredRunning, ReasonStartedOutside, fmt.Sprintf("Instance %s was started outside Stratos", instance.ID)); err != nil {
			return false, ctrl.Result{}, err
		}
		stopped := claim.Status.LastPhaseChangeTime // Standby: the instance was stopped then
		if err := r.transition(ctx, claim, node, v1beta1.PhaseStarting, ReasonStartedOutside, "Following an outside start"); err != nil {
			return false, ctrl.Result{}, err
		}
		// Noticed late, the Node may be Ready again already, and a kubelet reports an
		// unchanged status only every five minutes: judged from now, as a start of
		// Stratos's own is, it would not look Ready within the start timeout. Any Ready
		// report since the instance was known stopped came after the outside start (a
		// second later, as phase and condition times are stored to the second).
		if instance.State == cloudprovider.StateRunning && node != nil && stopped != nil && readySince(node, stopped.Add(time.Second)) {
			return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseRunning, ReasonStarted, "Node Ready again after an outside start; it takes pods")
		}
		return true, ctrl.Result{}, nil
	}
	if claim.Spec.DesiredState != v1beta1.DesiredRunning {
		return false, r.requeueWithin(r.Options.ResyncInterval), nil
	}
	if instance.State != cloudprovider.StateStopped {
		return false, r.poll(), nil // still stopping
	}
	refused, err := r.start(ctx, claim, node)
	switch {
	case refused:
		return false, r.requeueWithin(r.Options.ResyncInterval), err
	case err != nil:
		return false, ctrl.Result{}, fmt.Errorf("starting instance %s: %w", instance.ID, err)
	}
	return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseStarting, ReasonStarting, "Starting the instance")
}

// starting waits for the started instance's Node to report Ready again, then lifts the
// standby taint and the cordon. A Node that is not Ready again within the start timeout
// means a broken instance: the claim is removed.
func (r *Lifecycle) starting(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
	instance, node, ok, err := r.observe(ctx, claim)
	if !ok {
		return false, ctrl.Result{}, err
	}
	switch instance.State {
	case cloudprovider.StateStopped:
		if claim.Spec.DesiredState == v1beta1.DesiredStandby {
			return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseStandby, ReasonStopped, "Instance stopped before its Node was Ready")
		}
	case cloudprovider.StateRunning:
		if node != nil && readySince(node, claim.Status.LastPhaseChangeTime.Time) {
			message := fmt.Sprintf("Node Ready %.1fs after the start; it takes pods", r.since(claim.Status.LastPhaseChangeTime.Time).Seconds())
			return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseRunning, ReasonStarted, message)
		}
	}
	if r.startTimedOut(claim) {
		return false, ctrl.Result{}, r.removeForStartTimeout(ctx, claim)
	}
	if instance.State == cloudprovider.StateStopped {
		// Stopped again before it ran: start it again.
		refused, err := r.start(ctx, claim, node)
		if refused {
			return false, r.requeueWithin(r.Options.ResyncInterval), err
		}
		return false, r.poll(), err
	}
	// The Node's Ready wakes the claim; the poll covers an instance still pending and
	// the start timeout.
	return false, r.poll(), nil
}

// start asks the cloud to start the claim's instance, unless its pool is paused, and records an accepted start in
// the Started condition. A start refused for lack of capacity or quota, or because the
// instance is not the cluster's (its claim then says so at its next look), is not retried:
// the claim goes back to standby (refused is true; err then says whether recording the
// refusal failed), so that provisioning looks elsewhere instead of pods waiting on a
// start that keeps failing. Other errors, such as throttling, are for the caller to
// retry with backoff.
func (r *Lifecycle) start(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node) (refused bool, err error) {
	if err := r.hold(ctx, claim, "the start"); err != nil {
		return false, err
	}
	err = r.Cloud.Start(ctx, claim.Status.InstanceID)
	switch {
	case err == nil:
		// Each accepted start renews the condition's time, so that it tells when the
		// instance last started from standby: pod startup metrics read it to tell a pod
		// served by a start from one served by a node that ran already.
		meta.RemoveStatusCondition(&claim.Status.Conditions, v1beta1.ConditionStarted)
		r.setCondition(claim, v1beta1.ConditionStarted, metav1.ConditionTrue, ReasonStarted, fmt.Sprintf("The cloud accepted the start of instance %s", claim.Status.InstanceID))
		return false, nil
	case errors.Is(err, cloudprovider.ErrInsufficientCapacity), errors.Is(err, cloudprovider.ErrQuotaExceeded), errors.Is(err, cloudprovider.ErrNotOwned):
		return true, r.refuseStart(ctx, claim, node, err)
	default:
		return false, err
	}
}

// refuseStart records a start the cloud refused and returns the claim to standby, with
// a Warning Event whose reason is the cloud's code. The order of the writes matters:
// provisioning passes over standby claims whose Started condition is False for a while
// after the refusal, so the condition is written first, and the desired state only
// then; whoever sees the claim standing by again sees why. The condition's time is
// renewed at each refusal, so that the while counts from the last one. Both writes are
// made from copies: the API server's answer must not overwrite what this pass has not
// written yet.
func (r *Lifecycle) refuseStart(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node, refusal error) error {
	code := string(cloudprovider.CodeOf(refusal))
	message := fmt.Sprintf("The cloud refused to start instance %s (%v); the claim stands by until it is asked to run again", claim.Status.InstanceID, refusal)
	base := claim.DeepCopy()
	meta.RemoveStatusCondition(&claim.Status.Conditions, v1beta1.ConditionStarted)
	r.setCondition(claim, v1beta1.ConditionStarted, metav1.ConditionFalse, code, message)
	if err := r.Client.Status().Patch(ctx, claim.DeepCopy(), client.MergeFrom(base)); err != nil {
		return fmt.Errorf("recording the refused start: %w", err)
	}
	if claim.Spec.DesiredState != v1beta1.DesiredStandby {
		standby := claim.DeepCopy()
		standby.Spec.DesiredState = v1beta1.DesiredStandby
		if err := r.Client.Patch(ctx, standby, client.MergeFrom(claim)); err != nil {
			return fmt.Errorf("returning the claim to standby: %w", err)
		}
		claim.Spec.DesiredState = v1beta1.DesiredStandby
	}
	r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, code, "Start", message)
	if claim.Status.Phase == v1beta1.PhaseStarting {
		return r.transition(ctx, claim, node, v1beta1.PhaseStandby, ReasonStopped, "The instance stays stopped: its start was refused")
	}
	return nil
}

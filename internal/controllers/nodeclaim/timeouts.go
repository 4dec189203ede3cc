package nodeclaim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// Reasons of the timeouts of a claim asked to run: pods wait on it, so a node that does
// not become usable is removed rather than waited on.
const (
	ReasonInitializationTimeout = "InitializationTimeout"
	ReasonStartTimeout          = "StartTimeout"
	// ReasonStopTimeout: the instance did not stop within the stop timeout; its stop is
	// forced, and the claim removed if even that does not end.
	ReasonStopTimeout = "StopTimeout"
)

// checkInitializationTimeout removes a claim asked to run whose Node registered but is
// still not initialised (why says what is missing) when the initialization timeout has
// passed since the registration: a startup taint no agent removes or a network that
// never comes up would otherwise wedge the pods meant for it. The claim's finalizer
// terminates the instance; provisioning places the pods again.
func (r *Lifecycle) checkInitializationTimeout(ctx context.Context, claim *v1beta1.NodeClaim, why string) (bool, ctrl.Result, error) {
	timeout := r.Options.InitializationTimeout
	if left := timeout - r.since(registeredAt(claim)); left > 0 {
		// The Node's changes wake the claim; the requeue is for the timeout.
		return false, r.requeueWithin(left), nil
	}
	message := fmt.Sprintf("Node %s was not initialised within %s of its registration: %s", claim.Status.NodeName, timeout, why)
	if err := r.removeForTimeout(ctx, claim, ReasonInitializationTimeout, message+"; terminating the instance"); err != nil {
		return false, ctrl.Result{}, err
	}
	r.setCondition(claim, v1beta1.ConditionInitialized, metav1.ConditionFalse, ReasonInitializationTimeout, message)
	return false, ctrl.Result{}, nil
}

// registeredAt is when the claim's Node registered: the Registered condition's time, or
// failing that the last phase change, which for an initialising claim is the same moment.
func registeredAt(claim *v1beta1.NodeClaim) time.Time {
	fallback := claim.CreationTimestamp.Time
	if claim.Status.LastPhaseChangeTime != nil {
		fallback = claim.Status.LastPhaseChangeTime.Time
	}
	return trueSince(claim, v1beta1.ConditionRegistered, fallback)
}

// startTimedOut reports whether a starting claim's Node has had the start timeout to be
// Ready again since the start.
func (r *Lifecycle) startTimedOut(claim *v1beta1.NodeClaim) bool {
	return r.since(claim.Status.LastPhaseChangeTime.Time) >= r.Options.StartTimeout
}

// removeForStartTimeout removes a claim whose started instance did not bring its Node
// back: the instance is broken, its finalizer terminates it and the pool warms a fresh one.
func (r *Lifecycle) removeForStartTimeout(ctx context.Context, claim *v1beta1.NodeClaim) error {
	return r.removeForTimeout(ctx, claim, ReasonStartTimeout, fmt.Sprintf("Node %s was not Ready again within %s of the start of instance %s; terminating the instance",
		claim.Status.NodeName, r.Options.StartTimeout, claim.Status.InstanceID))
}

// checkStopTimeout forces the stop of a stopping claim's instance once the stop timeout
// has passed since the claim began to stop it: an operating system that does not shut
// down (a hung process, a kernel stuck on a volume) keeps an EC2 instance stopping for
// hours, billed, and the node never stands by. A node that stands by boots afresh, so
// nothing is lost that a plain stop would keep. When the forced stop has not ended
// either by twice the timeout, the instance is broken: the claim is removed and its
// finalizer terminates it. It reports whether it acted (forced or removed).
func (r *Lifecycle) checkStopTimeout(ctx context.Context, claim *v1beta1.NodeClaim, instance *cloudprovider.Instance) (bool, error) {
	timeout := r.Options.StopTimeout
	stopping := r.since(phaseSince(claim))
	if stopping < timeout {
		return false, nil
	}
	if stopping >= 2*timeout {
		r.forcedStops.Delete(claim.UID)
		return true, r.removeForTimeout(ctx, claim, ReasonStopTimeout, fmt.Sprintf(
			"Instance %s is still %s %s after its stop began, even with its stop forced; terminating it", instance.ID, instance.State, stopping.Round(time.Second)))
	}
	if _, forced := r.forcedStops.Load(claim.UID); forced {
		return false, nil
	}
	if err := r.hold(ctx, claim, "the forced stop"); err != nil {
		return false, err
	}
	if err := r.Cloud.ForceStop(ctx, instance.ID); err != nil {
		return false, err
	}
	r.forcedStops.Store(claim.UID, struct{}{})
	metrics.ForcedStops.WithLabelValues(claim.Spec.NodePool).Inc()
	r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, ReasonStopTimeout, "ForceStop",
		"Instance %s is still %s %s after its stop began; forcing the stop", instance.ID, instance.State, timeout)
	return true, nil
}

// phaseSince is when the claim entered its phase, or its creation when it does not say.
func phaseSince(claim *v1beta1.NodeClaim) time.Time {
	if claim.Status.LastPhaseChangeTime != nil {
		return claim.Status.LastPhaseChangeTime.Time
	}
	return claim.CreationTimestamp.Time
}

package nodeclaim

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// Reasons of the timeouts of a claim asked to run: pods wait on it, so a node that does
// not become usable is removed rather than waited on.
const (
	ReasonInitializationTimeout = "InitializationTimeout"
	ReasonStartTimeout          = "StartTimeout"
)

// checkInitializationTimeout removes a claim asked to run whose Node registered but is
// still not initialised (why says what is missing) when the initialization timeout has
// passed since the registration: a startup taint no agent removes or a network that
// never comes up would otherwise wedge the pods meant for it. The claim's finalizer
// terminates the instance; provisioning places the pods again.
func (r *Lifecycle) checkInitializationTimeout(ctx context.Context, claim *v1alpha1.NodeClaim, why string) (bool, ctrl.Result, error) {
	timeout := r.Options.InitializationTimeout
	if left := timeout - r.since(registeredAt(claim)); left > 0 {
		// The Node's changes wake the claim; the requeue is for the timeout.
		return false, r.requeueWithin(left), nil
	}
	message := fmt.Sprintf("Node %s was not initialised within %s of its registration: %s", claim.Status.NodeName, timeout, why)
	if err := r.removeForTimeout(ctx, claim, ReasonInitializationTimeout, message+"; terminating the instance"); err != nil {
		return false, ctrl.Result{}, err
	}
	r.setCondition(claim, v1alpha1.ConditionInitialized, metav1.ConditionFalse, ReasonInitializationTimeout, message)
	return false, ctrl.Result{}, nil
}

// registeredAt is when the claim's Node registered: the Registered condition's time, or
// failing that the last phase change, which for an initialising claim is the same moment.
func registeredAt(claim *v1alpha1.NodeClaim) time.Time {
	fallback := claim.CreationTimestamp.Time
	if claim.Status.LastPhaseChangeTime != nil {
		fallback = claim.Status.LastPhaseChangeTime.Time
	}
	return trueSince(claim, v1alpha1.ConditionRegistered, fallback)
}

// startTimedOut reports whether a starting claim's Node has had the start timeout to be
// Ready again since the start.
func (r *Lifecycle) startTimedOut(claim *v1alpha1.NodeClaim) bool {
	return r.since(claim.Status.LastPhaseChangeTime.Time) >= r.Options.StartTimeout
}

// removeForStartTimeout removes a claim whose started instance did not bring its Node
// back: the instance is broken, its finalizer terminates it and the pool warms a fresh one.
func (r *Lifecycle) removeForStartTimeout(ctx context.Context, claim *v1alpha1.NodeClaim) error {
	return r.removeForTimeout(ctx, claim, ReasonStartTimeout, fmt.Sprintf("Node %s was not Ready again within %s of the start of instance %s; terminating the instance",
		claim.Status.NodeName, r.Options.StartTimeout, claim.Status.InstanceID))
}

package nodeclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Reasons of registration, initialization and liveness.
const (
	ReasonRegistered          = "Registered"
	ReasonRegistrationTimeout = "RegistrationTimeout"
	ReasonInitialized         = "Initialized"
	ReasonInstanceGone        = "InstanceGone"
)

// register waits for the kubelet to register a Node with the instance's provider ID
// (recorded first when the cloud reported none at the launch), then makes the Node the
// claim's: labels (its instance type's among them), annotations, taints, and for a
// standby claim a cordon. A Node that does not come within the registration timeout
// means a broken instance: the claim is removed and its instance terminated.
func (r *Lifecycle) register(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
	instance, node, ok, err := r.observe(ctx, claim)
	if !ok {
		return false, ctrl.Result{}, err
	}
	if claim.Status.ProviderID == "" && instance.ProviderID != "" {
		// Known only after the launch (on Cluster API, once the infrastructure provider
		// has provisioned the machine and CAPI copied its ID onto the Machine): recorded
		// now, so that the claim finds its Node and the Node its claim by it.
		claim.Status.ProviderID = instance.ProviderID
		if node, err = r.nodeOf(ctx, claim); err != nil {
			return false, ctrl.Result{}, err
		}
	}
	if node == nil {
		left := r.Options.RegistrationTimeout - r.since(launchedAt(claim))
		if left <= 0 {
			// The claim says why it goes, so that its pool counts the failure and backs off.
			message := fmt.Sprintf("No Node registered for instance %s within %s", claim.Status.InstanceID, r.Options.RegistrationTimeout)
			return false, ctrl.Result{}, r.removeForFailure(ctx, claim, v1beta1.ConditionRegistered, ReasonRegistrationTimeout, message, message)
		}
		if claim.Status.ProviderID == "" {
			// No Node can be told to be the claim's yet, and nothing wakes the claim when
			// the cloud learns the ID: it is asked again at the next poll.
			return false, r.requeueWithin(min(left, r.Options.PollInterval)), nil
		}
		// The Node's creation wakes the claim; the requeue is for the timeout.
		return false, r.requeueWithin(left), nil
	}
	claim.Status.NodeName = node.Name
	recordCapacity(claim, node)
	message := fmt.Sprintf("Node %s registered", node.Name)
	r.setCondition(claim, v1beta1.ConditionRegistered, metav1.ConditionTrue, ReasonRegistered, message)
	return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseInitializing, ReasonRegistered, message)
}

// initialize waits until the Node is Ready, its network up and its startup taints gone.
// A claim meant for standby then warms up; any other runs.
func (r *Lifecycle) initialize(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
	node, err := r.nodeOf(ctx, claim)
	if err != nil || node == nil {
		return false, r.poll(), err
	}
	recordCapacity(claim, node)
	if why := notInitialized(node, claim); why != "" {
		r.setCondition(claim, v1beta1.ConditionInitialized, metav1.ConditionFalse, "NotInitialized", why)
		if claim.Spec.DesiredState == v1beta1.DesiredStandby {
			return r.checkWarmupTimeout(ctx, claim, node, why)
		}
		return r.checkInitializationTimeout(ctx, claim, why)
	}
	r.setCondition(claim, v1beta1.ConditionInitialized, metav1.ConditionTrue, ReasonInitialized, "Node is Ready with its network up and its startup taints gone")
	if claim.Spec.DesiredState == v1beta1.DesiredStandby {
		return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseWarmingUp, ReasonInitialized, "Initialized; pulling the pool's images before stopping")
	}
	return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseRunning, ReasonInitialized, "Initialized; the Node takes pods")
}

// recordCapacity copies what the kubelet reports of the machine, once it has.
func recordCapacity(claim *v1beta1.NodeClaim, node *corev1.Node) {
	if len(node.Status.Capacity) > 0 {
		claim.Status.Capacity = node.Status.Capacity.DeepCopy()
		claim.Status.Allocatable = node.Status.Allocatable.DeepCopy()
	}
}

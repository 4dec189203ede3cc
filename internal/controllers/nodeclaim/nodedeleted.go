package nodeclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// ReasonNodeDeleted: the claim's Node was deleted while its instance ran; the claim is
// removed and its instance terminated.
const ReasonNodeDeleted = "NodeDeleted"

// keepsNode wraps the step of a phase whose instance runs with its Node registered:
// Initializing, WarmingUp, Running and Draining. A running kubelet does not register a
// deleted Node again, only a new boot does, so such a claim would wait for ever on a
// Node that does not come back, its instance billed and counted against the limits.
// Deleting the Node is taken as asking for the node to go, as Karpenter does: the claim
// is removed, its finalizer terminates the instance (no Node is left to drain), and
// provisioning places the claim's pods again. A stopped instance's Node is another
// matter: the kubelet registers it again at the next start, and the claim adopts it
// (registeredAgain), so Stopping, Standby and Starting are not wrapped. Deletion is
// not held by a paused pool: it is someone's explicit request.
func (r *Lifecycle) keepsNode(next step) step {
	return func(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
		deleted, err := r.nodeDeleted(ctx, claim)
		switch {
		case err != nil:
			return false, ctrl.Result{}, err
		case deleted:
			return false, ctrl.Result{}, r.removeForDeletedNode(ctx, claim)
		}
		return next(ctx, claim)
	}
}

// nodeDeleted reports whether the claim's registered Node is gone or being deleted. The
// cache may be behind the API server, as when a Node was deleted and created again
// under its name, so a Node the cache lacks is asked of the API server before the claim
// is removed for it.
func (r *Lifecycle) nodeDeleted(ctx context.Context, claim *v1beta1.NodeClaim) (bool, error) {
	if claim.Status.NodeName == "" {
		return false, nil
	}
	node, err := r.nodeOf(ctx, claim)
	if err != nil {
		return false, err
	}
	if node != nil {
		return !node.DeletionTimestamp.IsZero(), nil
	}
	err = r.APIReader.Get(ctx, client.ObjectKey{Name: claim.Status.NodeName}, &corev1.Node{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// removeForDeletedNode removes a claim whose Node was deleted. When its instance was
// terminated first, as when the cloud controller manager deletes the Node of a
// terminated instance, the removal says so instead.
func (r *Lifecycle) removeForDeletedNode(ctx context.Context, claim *v1beta1.NodeClaim) error {
	instance, gone, err := r.instanceOf(ctx, claim)
	if err == nil && gone && instance != nil {
		return r.removeClaim(ctx, claim, ReasonInstanceGone, fmt.Sprintf("Instance %s was terminated outside Stratos, and its Node %s deleted", claim.Status.InstanceID, claim.Status.NodeName))
	}
	return r.removeClaim(ctx, claim, ReasonNodeDeleted, fmt.Sprintf("Node %s was deleted while the claim was %s: the node goes, and instance %s is terminated",
		claim.Status.NodeName, claim.Status.Phase, claim.Status.InstanceID))
}

// registeredAgain reports whether the Node was registered afresh (see the function
// of that name). A Node from the cache may be older than the claim, which is read from
// the API server: a Node shaped at registration a moment ago can still show the state
// label it came with. So a Node that looks registered again is read from the API
// server to be sure before Stratos adopts it anew.
func (r *Lifecycle) registeredAgain(ctx context.Context, node *corev1.Node, claim *v1beta1.NodeClaim) (bool, error) {
	if !registeredAgain(node, claim) {
		return false, nil
	}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
		return false, err
	}
	return registeredAgain(node, claim), nil
}

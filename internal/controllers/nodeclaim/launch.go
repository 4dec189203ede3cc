package nodeclaim

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/nodeclass"
)

// Reasons for the Launched condition and launch events.
const (
	ReasonLaunched          = "Launched"
	ReasonNodePoolNotFound  = "NodePoolNotFound"
	ReasonNodeClassNotFound = "NodeClassNotFound"
	// ReasonNodeClassNotReady: the node class has not resolved; the launch waits for it.
	ReasonNodeClassNotReady = "NodeClassNotReady"
	ReasonLaunchTimeout     = "LaunchTimeout"
)

// launch asks the cloud for the claim's instance. The claim's UID is the idempotency
// token: a launch redone after a crash gets the instance the first one made.
func (r *Lifecycle) launch(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
	if err := r.hold(ctx, claim, "the launch"); err != nil {
		return false, ctrl.Result{}, err
	}
	if wait := r.launchRetries().wait(claim.UID, r.Clock.Now()); wait > 0 {
		// Woken early, by its own status write or a change of its pool: the launch
		// failed a moment ago and waits out its backoff.
		return false, r.requeueWithin(wait), nil
	}
	req, failure, err := r.createRequest(ctx, claim)
	if err != nil {
		return false, ctrl.Result{}, err
	}
	var instance *cloudprovider.Instance
	if failure == nil {
		instance, err = r.Cloud.Create(ctx, req.request)
		if err != nil {
			failure = launchFailureOf(err)
		}
	}
	if failure != nil && failure.reason == string(cloudprovider.CodeInsufficientCapacity) && claim.Spec.DesiredState == v1beta1.DesiredStandby {
		// No pod waits on a standby claim: it goes at once, and its pool makes another
		// where capacity is, as the offerings that failed are marked unavailable.
		if err := r.removeClaim(ctx, claim, failure.reason, "No capacity for the standby node: "+failure.message); err != nil {
			return false, ctrl.Result{}, err
		}
		return false, ctrl.Result{}, nil
	}
	if failure != nil {
		return false, r.launchFailed(ctx, claim, failure), nil
	}

	r.launchRetries().forget(claim.UID)
	claim.Status.InstanceID = instance.ID
	claim.Status.ProviderID = instance.ProviderID
	claim.Status.InstanceType = instance.Type
	claim.Status.Zone = instance.Zone
	claim.Status.CapacityType = instance.CapacityType
	claim.Status.ImageID = instance.ImageID
	claim.Status.InstanceProfile = instance.InstanceProfile
	claim.Status.TemplateHash = req.templateHash
	message := fmt.Sprintf("Launched %s, a %s %s instance in %s", instance.ID, instance.Type, instance.CapacityType, instance.Zone)
	r.setCondition(claim, v1beta1.ConditionLaunched, metav1.ConditionTrue, ReasonLaunched, message)
	// Launched from the current template: said now, in this status write, rather than in
	// a write of its own by the pool's drift pass.
	notDrifted := claimtemplate.NotDrifted()
	r.setCondition(claim, notDrifted.Type, notDrifted.Status, notDrifted.Reason, notDrifted.Message)
	return true, ctrl.Result{}, r.transition(ctx, claim, nil, v1beta1.PhaseRegistering, ReasonLaunched, message)
}

// launchFailure says why a launch did not happen.
type launchFailure struct {
	reason, message string
	// retryable failures (throttling, cloud errors, account limits) back off, claim by
	// claim; the others poll slowly, as only a change elsewhere ends them.
	retryable bool
}

// launchFailureOf is the failure of a launch the cloud refused. An account limit is
// named, and retried on the backoff: the offerings it covers are marked unavailable, so
// the next attempt falls through to those outside it if the claim may use any, and
// otherwise waits for the marks to expire (an instance of the account terminated, or
// the limit raised) before asking the cloud again.
func launchFailureOf(err error) *launchFailure {
	var cloudErr *cloudprovider.Error
	if errors.As(err, &cloudErr) && cloudErr.Code == cloudprovider.CodeQuotaExceeded && cloudErr.Limit != "" {
		return &launchFailure{reason: v1beta1.ReasonAccountLimitExceeded, retryable: true,
			message: fmt.Sprintf("The account limit %s covers the offerings tried; launching outside it where the claim allows, else waiting: %s", cloudErr.Limit, err.Error())}
	}
	return &launchFailure{reason: string(cloudprovider.CodeOf(err)), message: err.Error(), retryable: cloudprovider.IsRetryable(err)}
}

// launchFailed records a failed launch on the claim, and removes the claim once the
// launch timeout has passed.
func (r *Lifecycle) launchFailed(ctx context.Context, claim *v1beta1.NodeClaim, failure *launchFailure) ctrl.Result {
	left := r.Options.LaunchTimeout - r.since(claim.CreationTimestamp.Time)
	if left <= 0 {
		if err := r.removeForTimeout(ctx, claim, ReasonLaunchTimeout, fmt.Sprintf("No instance after %s: %s", r.Options.LaunchTimeout, failure.message)); err != nil {
			return ctrl.Result{RequeueAfter: r.Options.PollInterval}
		}
		return ctrl.Result{}
	}
	if previous := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionLaunched); previous == nil || previous.Reason != failure.reason {
		r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, failure.reason, "Launch", failure.message)
	}
	r.setCondition(claim, v1beta1.ConditionLaunched, metav1.ConditionFalse, failure.reason, failure.message)
	claim.Status.Phase = v1beta1.PhaseLaunching
	if failure.retryable {
		return r.requeueWithin(min(r.launchRetries().failed(claim.UID, r.Clock.Now()), left))
	}
	return r.requeueWithin(10 * r.Options.PollInterval)
}

// launchRequest is a create request with the template hash it was made from.
type launchRequest struct {
	request      *cloudprovider.CreateRequest
	templateHash string
}

// createRequest builds the launch of a claim from the claim, its pool and its node class.
// A missing pool or class, or a class that has not resolved, is a launch failure, not
// an error: the claim waits for it.
func (r *Lifecycle) createRequest(ctx context.Context, claim *v1beta1.NodeClaim) (*launchRequest, *launchFailure, error) {
	pool := &v1beta1.NodePool{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: claim.Spec.NodePool}, pool); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &launchFailure{reason: ReasonNodePoolNotFound, message: fmt.Sprintf("NodePool %s does not exist", claim.Spec.NodePool)}, nil
		}
		return nil, nil, err
	}
	class, err := nodeclass.Get(ctx, r.Client, claim.Spec.NodeClassRef)
	if err != nil {
		if apierrors.IsNotFound(err) {
			ref := claim.Spec.NodeClassRef
			return nil, &launchFailure{reason: ReasonNodeClassNotFound, message: fmt.Sprintf("%s %s does not exist", ref.Kind, ref.Name)}, nil
		}
		return nil, nil, err
	}
	if ready, _, message := nodeclass.Ready(class); !ready {
		return nil, &launchFailure{reason: ReasonNodeClassNotReady, message: message}, nil
	}
	hash, err := claimtemplate.ClaimHash(claim, pool, class)
	if err != nil {
		return nil, nil, err
	}
	return &launchRequest{request: buildCreateRequest(claim, class, r.Options.ClusterName), templateHash: hash}, nil, nil
}

// buildCreateRequest is the launch of a claim. The kubelet registers the Node with the
// claim's labels (the claim's name among them, so the Node maps back to its claim at
// once), its taints and startup taints, and, for a claim meant for standby, the standby
// taint, so that no pod lands on a warming node.
func buildCreateRequest(claim *v1beta1.NodeClaim, class client.Object, clusterName string) *cloudprovider.CreateRequest {
	labels := maps.Clone(claim.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1beta1.LabelNodePool] = claim.Spec.NodePool
	labels[v1beta1.LabelNodeClaim] = claim.Name
	labels[v1beta1.LabelState] = string(v1beta1.PhaseRegistering)

	var taints []corev1.Taint
	for _, t := range append(append([]v1beta1.Taint(nil), claim.Spec.Taints...), claim.Spec.StartupTaints...) {
		taints = append(taints, t.Core())
	}
	// Every Node registers parked: one launched to run pods opens once it runs, with the
	// room provisioning found on it reserved for its pods (see reserved).
	taints = append(taints, v1beta1.StandbyTaint)
	requirements := v1beta1.CoreRequirements(claim.Spec.Requirements)
	return &cloudprovider.CreateRequest{
		ClientToken:  string(claim.UID),
		NodeClass:    class,
		Requirements: requirements,
		Requests:     claim.Spec.Resources.Requests,
		Labels:       labels,
		Taints:       taints,
		Kubelet:      claim.Spec.Kubelet,
		Tags: map[string]string{
			v1beta1.TagCluster:   clusterName,
			v1beta1.TagNodePool:  claim.Spec.NodePool,
			v1beta1.TagNodeClaim: claim.Name,
		},
	}
}

package nodeclaim

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// instanceOf asks the cloud about the claim's instance. gone is true when the cloud has
// forgotten it (instance is nil then) or it is terminating or terminated. An instance
// that exists but is not the cluster's is cloudprovider.ErrNotOwned.
func (r *Lifecycle) instanceOf(ctx context.Context, claim *v1beta1.NodeClaim) (instance *cloudprovider.Instance, gone bool, err error) {
	instance, err = r.Cloud.Get(ctx, claim.Status.InstanceID)
	if errors.Is(err, cloudprovider.ErrNotFound) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return instance, instance.State == cloudprovider.StateShuttingDown || instance.State == cloudprovider.StateTerminated, nil
}

// observe asks the cloud about the claim's instance and the cache about its Node; ok is
// false when the claim cannot go on now. A claim whose instance is terminated is
// removed, unless the cloud ended it at its launch (see endedAtLaunch). One the cloud does not find is judged with its pool (see vanished): removed,
// or left waiting with a *lostError, as is one whose instance is not the cluster's. A
// freshly launched instance the cloud does not know yet is not gone: err is
// errNotVisibleYet.
func (r *Lifecycle) observe(ctx context.Context, claim *v1beta1.NodeClaim) (instance *cloudprovider.Instance, node *corev1.Node, ok bool, err error) {
	instance, gone, err := r.instanceOf(ctx, claim)
	switch {
	case errors.Is(err, cloudprovider.ErrNotOwned):
		r.ownershipLost(claim, err)
		return nil, nil, false, &lostError{wait: r.Options.ResyncInterval}
	case err != nil:
		return nil, nil, false, err
	case gone && instance == nil && notVisibleYet(claim, r.Clock.Now(), r.Options.InstanceVisibilityGrace):
		return nil, nil, false, errNotVisibleYet
	case gone && instance == nil:
		return nil, nil, false, r.vanished(ctx, claim)
	case gone && instance.EndedAtLaunch != "":
		return nil, nil, false, r.endedAtLaunch(ctx, claim, instance)
	case gone:
		return nil, nil, false, r.removeClaim(ctx, claim, ReasonInstanceGone, fmt.Sprintf("Instance %s was terminated outside Stratos", claim.Status.InstanceID))
	}
	r.instanceFound(claim)
	node, err = r.nodeOf(ctx, claim)
	return instance, node, err == nil, err
}

// nodeOf returns the Node that reports the claim's provider ID, or nil.
func (r *Lifecycle) nodeOf(ctx context.Context, claim *v1beta1.NodeClaim) (*corev1.Node, error) {
	if claim.Status.ProviderID == "" {
		return nil, nil
	}
	nodes := &corev1.NodeList{}
	if err := r.Client.List(ctx, nodes, client.MatchingFields{indexes.NodeProviderID: claim.Status.ProviderID}); err != nil {
		return nil, err
	}
	if len(nodes.Items) == 0 {
		return nil, nil
	}
	return &nodes.Items[0], nil
}

// removeClaim deletes a claim that cannot go on, saying why; its finalizer then cleans
// up. Steps that call it report that the claim did not move on.
func (r *Lifecycle) removeClaim(ctx context.Context, claim *v1beta1.NodeClaim, reason, message string) error {
	r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, reason, "Delete", message)
	metrics.NodeClaimsTerminated.WithLabelValues(claim.Spec.NodePool, reason).Inc()
	return client.IgnoreNotFound(r.Client.Delete(ctx, claim))
}

// removeForTimeout removes a claim a timeout ran out on, unless its pool is paused: a
// paused pool's timeouts wait, and apply once it is resumed.
func (r *Lifecycle) removeForTimeout(ctx context.Context, claim *v1beta1.NodeClaim, reason, message string) error {
	if err := r.hold(ctx, claim, "removing the claim for "+reason); err != nil {
		return err
	}
	return r.removeClaim(ctx, claim, reason, message)
}

// removeForFailure removes a claim a warm-up or registration timeout ran out on, having
// first written why on its condition (conditionType False with reason and why): its pool
// counts the failure by that condition and backs off, and must see it no later than the
// deletion, or it would warm a replacement at once.
func (r *Lifecycle) removeForFailure(ctx context.Context, claim *v1beta1.NodeClaim, conditionType, reason, why, message string) error {
	if err := r.hold(ctx, claim, "removing the claim for "+reason); err != nil {
		return err
	}
	base := claim.DeepCopy()
	r.setCondition(claim, conditionType, metav1.ConditionFalse, reason, why)
	if err := r.Client.Status().Patch(ctx, claim, client.MergeFrom(base)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return r.removeClaim(ctx, claim, reason, message)
}

// trueSince is when the claim's condition of that type turned True, or fallback when it
// is not True.
func trueSince(claim *v1beta1.NodeClaim, conditionType string, fallback time.Time) time.Time {
	if c := meta.FindStatusCondition(claim.Status.Conditions, conditionType); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return fallback
}

// setCondition sets a claim condition, keeping its transition time when the status stays.
func (r *Lifecycle) setCondition(claim *v1beta1.NodeClaim, conditionType string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&claim.Status.Conditions, metav1.Condition{
		Type: conditionType, Status: status, Reason: reason, Message: message,
		ObservedGeneration: claim.Generation, LastTransitionTime: metav1.NewTime(r.Clock.Now()),
	})
}

// recordTransition counts a phase change and how long the claim spent in the phase it left.
func recordTransition(claim *v1beta1.NodeClaim, from, to v1beta1.NodeClaimPhase, now time.Time) {
	metrics.PhaseTransitions.WithLabelValues(claim.Spec.NodePool, string(from), string(to)).Inc()
	if from != "" && claim.Status.LastPhaseChangeTime != nil {
		metrics.PhaseDuration.WithLabelValues(claim.Spec.NodePool, string(from)).Observe(now.Sub(claim.Status.LastPhaseChangeTime.Time).Seconds())
	}
}

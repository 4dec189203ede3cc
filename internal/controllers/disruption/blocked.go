package disruption

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/pdbs"
)

// holdBack records on the claim that a PodDisruptionBudget keeps its node, which
// disruption would otherwise give back, remove or replace: the DisruptionBlocked
// condition, True with the budget's words, and an Event. Both are written only when the
// words change, so a node held for a day is written once, not at every pass.
func (c *Controller) holdBack(ctx context.Context, claim *v1beta1.NodeClaim, blocked *pdbs.Blocked) {
	why := blocked.String() + "; the node is kept until it can"
	if c.setBlocked(ctx, claim, metav1.ConditionTrue, ReasonPodDisruptionBudget, why) {
		log.FromContext(ctx).V(1).Info("A PodDisruptionBudget keeps a node", "nodeclaim", claim.Name, "budgets", blocked.Budgets, "why", why)
		c.event(claim, ReasonDisruptionBlocked, "%s", why)
	}
}

// release records that no PodDisruptionBudget keeps the claim's node any more, if one
// did.
func (c *Controller) release(ctx context.Context, claim *v1beta1.NodeClaim) {
	if meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionDisruptionBlocked) {
		c.setBlocked(ctx, claim, metav1.ConditionFalse, ReasonNotBlocked, "The PodDisruptionBudgets of the node's pods let them go")
	}
}

// setBlocked writes the claim's DisruptionBlocked condition unless it says that already,
// and reports whether it wrote. A conflict is retried on the claim read again: the
// lifecycle controller writes the claim's phase at the same moment after an abandoned
// drain, and no later pass need come back to the claim (a node whose pods have nowhere
// to go is no consolidation candidate), so the condition would be lost. Another failure
// is left to the next pass that looks at the claim.
func (c *Controller) setBlocked(ctx context.Context, claim *v1beta1.NodeClaim, status metav1.ConditionStatus, reason, message string) bool {
	written := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if have := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionDisruptionBlocked); have != nil &&
			have.Status == status && have.Reason == reason && have.Message == message {
			return nil
		}
		updated := claim.DeepCopy()
		meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionDisruptionBlocked,
			Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(c.Clock.Now())})
		err := c.Client.Status().Patch(ctx, updated, client.MergeFromWithOptions(claim, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			fresh := &v1beta1.NodeClaim{}
			if readErr := c.APIReader.Get(ctx, client.ObjectKeyFromObject(claim), fresh); readErr != nil {
				return readErr
			}
			claim = fresh
		}
		if err != nil {
			return err
		}
		c.State.ObserveWrite(updated, claim.ResourceVersion)
		written = true
		return nil
	})
	if err != nil {
		log.FromContext(ctx).V(1).Info("Writing the DisruptionBlocked condition failed; the next pass tries again", "nodeclaim", claim.Name, "error", err.Error())
	}
	return written
}

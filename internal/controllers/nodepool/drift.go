package nodepool

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
)

// Reasons of the Drifted condition of a claim.
const (
	ReasonTemplateChanged = "TemplateChanged"
	ReasonTemplateCurrent = claimtemplate.ReasonTemplateCurrent
	// ReasonImageChanged: the node runs an image its node class no longer resolves to.
	ReasonImageChanged = "ImageChanged"
	// ReasonInstanceProfileChanged: the node holds an instance profile its node class no
	// longer launches with (its spec.role changed).
	ReasonInstanceProfileChanged = "InstanceProfileChanged"
	// ReasonStandbyShapeChanged: a standby node of another shape than spec.standby asks for.
	ReasonStandbyShapeChanged = "StandbyShapeChanged"
)

// markDrift sets the Drifted condition of the pool's launched claims, so that users see
// which nodes will be replaced. Decisions do not read it back: the pool controller and
// disruption compare hashes and images themselves, so a condition lost to a concurrent
// status write only delays what users see until the next pass.
func (r *Reconciler) markDrift(ctx context.Context, pool *v1beta1.NodePool, claims []v1beta1.NodeClaim, current claimtemplate.Current) error {
	for i := range claims {
		claim := &claims[i]
		if claim.Status.TemplateHash == "" || !claim.DeletionTimestamp.IsZero() {
			continue
		}
		condition := claimtemplate.NotDrifted()
		switch {
		case claimtemplate.ProfileDrifted(claim, current.InstanceProfile):
			// Before the template: a changed role changes both, and the profile says more.
			condition.Status, condition.Reason = metav1.ConditionTrue, ReasonInstanceProfileChanged
			condition.Message = fmt.Sprintf("The node holds instance profile %s, and its node class now launches with %s (its role changed); it will be replaced",
				claim.Status.InstanceProfile, current.InstanceProfile)
		case claimtemplate.Drifted(claim, current.Hash):
			condition.Status, condition.Reason = metav1.ConditionTrue, ReasonTemplateChanged
			condition.Message = "The pool's template or node class changed since the node was launched; it will be replaced"
		case claimtemplate.ImageDrifted(claim, current.Images):
			condition.Status, condition.Reason = metav1.ConditionTrue, ReasonImageChanged
			condition.Message = fmt.Sprintf("The node runs image %s, and its node class now resolves to %s; it will be replaced",
				claim.Status.ImageID, strings.Join(current.Images, ", "))
		case claimtemplate.ShapeDrifted(pool, claim):
			condition.Status, condition.Reason = metav1.ConditionTrue, ReasonStandbyShapeChanged
			condition.Message = "The pool's spec.standby asks for another shape of standby node since this one was made; it will be replaced"
		}
		if marked := meta.FindStatusCondition(claim.Status.Conditions, condition.Type); marked != nil && marked.Status == condition.Status && marked.Reason == condition.Reason {
			continue
		}
		base := claim.DeepCopy()
		meta.SetStatusCondition(&claim.Status.Conditions, condition)
		// A conflict means the claim changed: its update brings the pool back here.
		err := r.Client.Status().Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("marking the drift of claim %s: %w", claim.Name, err)
		}
	}
	return nil
}

// nextExpiry is when the first of the pool's claims not yet expired expires, or zero.
func nextExpiry(pool *v1beta1.NodePool, claims []v1beta1.NodeClaim, now time.Time) time.Time {
	var next time.Time
	for i := range claims {
		at := claimtemplate.ExpiresAt(pool, &claims[i])
		if at.IsZero() || !at.After(now) || !claims[i].DeletionTimestamp.IsZero() {
			continue
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

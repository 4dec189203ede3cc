package nodeclaim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/indexes"
)

// An instance the cloud does not answer for as the cluster's is not taken for gone on
// that word alone. One without the cluster's ownership tag exists, runs and is billed,
// but Stratos may not act on it (the IAM policy scopes starts, stops and terminations by
// the tag): its claim and Node stay as they are, and say so, until the tag is back or
// the instance is terminated. One the cloud does not find is gone, unless many of its
// pool's instances are not found at the same look: so many at once is more likely the
// cloud's answer gone wrong (a changed tag, account or region, a describe that returns
// nothing) than instances gone, so their claims wait until the cloud has kept saying so
// for Options.VanishConfirmation.

// A pool's instances vanish at once when, at one look, the cloud does not answer for at
// least vanishFloor of them, and for more than vanishShare of its claims with an
// instance. One instance alone is never a mass: its claim is removed at once.
const (
	vanishShare = 0.1
	vanishFloor = 2
)

// ReasonInstanceFound is the reason of an InstanceLost condition turned False: the cloud
// answers for the instance as the cluster's again.
const ReasonInstanceFound = "InstanceFound"

// lostError says that the claim waits for the cloud to answer for its instance again;
// wait is when to look again.
type lostError struct{ wait time.Duration }

func (e *lostError) Error() string {
	return "the cloud does not answer for the claim's instance as this cluster's; waiting"
}

// massVanish reports whether missing instances out of a pool's total are too many at
// once to be taken at the cloud's word.
func massVanish(missing, total int) bool {
	return missing >= vanishFloor && float64(missing) > vanishShare*float64(total)
}

// ownershipLost records on the claim that its instance exists but is not the cluster's
// (cause says how it is tagged).
func (r *Lifecycle) ownershipLost(claim *v1beta1.NodeClaim, cause error) {
	how := cause.Error()
	var cloudErr *cloudprovider.Error
	if errors.As(cause, &cloudErr) && cloudErr.Message != "" {
		how = cloudErr.Message
	}
	r.markLost(claim, v1beta1.ReasonOwnershipLost, fmt.Sprintf(
		"Instance %s is not this cluster's (%s, not %s=%s): Stratos leaves the instance, this claim and its Node as they are until the tag is back or the instance is terminated",
		claim.Status.InstanceID, how, v1beta1.TagCluster, r.Options.ClusterName))
}

// vanished judges a claim whose instance the cloud does not find, past the visibility
// grace, with the rest of its pool: alone, the instance is gone and the claim is
// removed; among many at once, the claim waits for the confirmation period, counted from
// when the claim first said so, and is removed only if the cloud still does not find
// the instance then.
func (r *Lifecycle) vanished(ctx context.Context, claim *v1beta1.NodeClaim) error {
	missing, total, err := r.unanswered(ctx, claim.Spec.NodePool)
	if err != nil {
		return fmt.Errorf("asking the cloud about the rest of pool %s: %w", claim.Spec.NodePool, err)
	}
	if !massVanish(missing, total) {
		return r.removeClaim(ctx, claim, ReasonInstanceGone, fmt.Sprintf("Instance %s is gone: the cloud does not know it", claim.Status.InstanceID))
	}
	confirmation := r.Options.VanishConfirmation
	left := confirmation - r.since(lostSince(claim, v1beta1.ReasonInstancesVanished, r.Clock.Now()))
	if left <= 0 {
		return r.removeClaim(ctx, claim, ReasonInstanceGone, fmt.Sprintf("Instance %s is gone: the cloud has not known it for %s", claim.Status.InstanceID, confirmation))
	}
	r.markLost(claim, v1beta1.ReasonInstancesVanished, fmt.Sprintf(
		"The cloud does not answer for %d of the pool's %d instances at once, instance %s among them (not found): so many at once may be the cloud's answer gone wrong rather than instances gone, so the claim and its Node stay until the cloud has not found the instance for %s",
		missing, total, claim.Status.InstanceID, confirmation))
	return &lostError{wait: left}
}

// unanswered asks the cloud about the instances of every claim of the pool at once (the
// calls are batched) and counts those it does not answer for as the cluster's: not
// found past the visibility grace, or not owned.
func (r *Lifecycle) unanswered(ctx context.Context, pool string) (missing, total int, err error) {
	claims := &v1beta1.NodeClaimList{}
	if err := r.Client.List(ctx, claims, client.MatchingFields{indexes.ClaimNodePool: pool}); err != nil {
		return 0, 0, err
	}
	now := r.Clock.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range claims.Items {
		claim := &claims.Items[i]
		if claim.Status.InstanceID == "" || !claim.DeletionTimestamp.IsZero() {
			continue
		}
		total++
		wg.Go(func() {
			_, err := r.Cloud.Get(ctx, claim.Status.InstanceID)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, cloudprovider.ErrNotFound):
				if !notVisibleYet(claim, now, r.Options.InstanceVisibilityGrace) {
					missing++
				}
			case errors.Is(err, cloudprovider.ErrNotOwned):
				missing++
			case err != nil:
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	return missing, total, errors.Join(errs...)
}

// markLost sets the claim's InstanceLost condition, with a Warning Event when it turns
// True or its reason changes; the condition's time is then that of this first sight.
func (r *Lifecycle) markLost(claim *v1beta1.NodeClaim, reason, message string) {
	if c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionInstanceLost); c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
		meta.RemoveStatusCondition(&claim.Status.Conditions, v1beta1.ConditionInstanceLost)
		r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, reason, "Wait", message)
	}
	r.setCondition(claim, v1beta1.ConditionInstanceLost, metav1.ConditionTrue, reason, message)
}

// instanceFound clears a claim's InstanceLost condition once the cloud answers for its
// instance as the cluster's again.
func (r *Lifecycle) instanceFound(claim *v1beta1.NodeClaim) {
	if !lost(claim) {
		return
	}
	message := fmt.Sprintf("The cloud answers for instance %s as this cluster's again", claim.Status.InstanceID)
	r.setCondition(claim, v1beta1.ConditionInstanceLost, metav1.ConditionFalse, ReasonInstanceFound, message)
	r.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, ReasonInstanceFound, "Resume", message)
}

// lost reports whether the claim says that the cloud does not answer for its instance.
func lost(claim *v1beta1.NodeClaim) bool {
	return meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionInstanceLost)
}

// lostSince is when the claim first said that its instance is lost for reason, or now.
func lostSince(claim *v1beta1.NodeClaim, reason string, now time.Time) time.Time {
	if c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionInstanceLost); c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason {
		return c.LastTransitionTime.Time
	}
	return now
}

package disruption

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/pdbs"
	"github.com/stratos-sh/stratos/internal/state"
)

// abandonBlockedDrains takes back the drains of the pool's nodes that
// PodDisruptionBudgets have blocked for longer than AbandonDrainAfter, in a pool that sets
// no terminationGracePeriod (with one, the lifecycle controller forces the drain once it passes).
// A drain is blocked while no pod left on its Node is leaving and none may be evicted
// now. Its claim is asked to run again: the lifecycle controller uncordons the Node,
// which serves pods again; once it runs, the node no longer counts against the pool's
// budget (until then it is still cordoned, so it counts as the census finds it). A
// drain is voluntary until it ends — only a claim deleted outright is beyond recall — so
// the choice to disrupt is disruption's to take back.
func (c *Controller) abandonBlockedDrains(ctx context.Context, pp *poolPass, claims []*v1beta1.NodeClaim) error {
	if pp.pool.Spec.Template.Spec.TerminationGracePeriod != nil {
		return nil
	}
	podsOf := map[string][]*corev1.Pod{}
	for _, cs := range pp.snap.Claims {
		podsOf[cs.Claim.Name] = cs.Pods
	}
	for _, claim := range claims {
		var blocked *pdbs.Blocked
		if drainingVoluntarily(claim) && involuntaryReason(pp.pool, claim) == "" {
			blocked = drainBlocked(pp.pdbSet(), podsOf[claim.Name])
		}
		if blocked == nil {
			delete(c.blockedDrains, claim.Name)
			continue
		}
		since, seen := c.blockedDrains[claim.Name]
		if !seen {
			since = pp.now
			c.blockedDrains[claim.Name] = since
		}
		if until := since.Add(c.Options.AbandonDrainAfter); pp.now.Before(until) {
			pp.wakeAt(until)
			continue
		}
		if err := c.abandon(ctx, pp, claim, blocked, pp.now.Sub(since)); err != nil {
			return err
		}
	}
	return nil
}

// drainingVoluntarily reports whether a claim drains because it was asked to stand by or
// to be terminated, not because it was deleted. (An interrupted or unhealthy node's drain
// is not taken back either: the node goes anyway.)
func drainingVoluntarily(claim *v1beta1.NodeClaim) bool {
	desired := claim.Spec.DesiredState
	return claim.DeletionTimestamp.IsZero() && claim.Status.Phase == v1beta1.PhaseDraining &&
		(desired == v1beta1.DesiredStandby || desired == v1beta1.DesiredTerminated)
}

// drainBlocked says why no workload pod left on a draining Node can go now (for the
// first of them in namespace/name order), or is nil while one is leaving or may be
// evicted: such a drain makes progress.
func drainBlocked(budgets pdbs.Set, pods []*corev1.Pod) *pdbs.Blocked {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	var first *pdbs.Blocked
	for _, pod := range pods {
		if !state.Workload(pod) {
			continue
		}
		if !pod.DeletionTimestamp.IsZero() {
			return nil
		}
		blocked := budgets.Evictions().Take([]*corev1.Pod{pod})
		if blocked == nil {
			return nil
		}
		if first == nil {
			first = blocked
		}
	}
	return first
}

// abandon asks the claim to run again and records why on the claim. Its place in the
// pool's budget stays taken for this pass: the Node is cordoned until the lifecycle
// controller acts, and the passes after count it from its phase. A replacement it was drained for is forgotten: it is planned again
// once the node's pods may go.
func (c *Controller) abandon(ctx context.Context, pp *poolPass, claim *v1beta1.NodeClaim, blocked *pdbs.Blocked, waited time.Duration) error {
	updated := claim.DeepCopy()
	updated.Spec.DesiredState = v1beta1.DesiredRunning
	if err := c.Client.Patch(ctx, updated, client.MergeFromWithOptions(claim, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // the claim changed: the next pass looks again
		}
		return fmt.Errorf("abandoning the drain of claim %s: %w", claim.Name, err)
	}
	c.State.ObserveWrite(updated, claim.ResourceVersion)
	delete(c.blockedDrains, claim.Name)
	delete(c.replacing, claim.Name)
	pp.running++
	metrics.DrainsAbandoned.WithLabelValues(pp.pool.Name).Inc()
	waited = waited.Round(time.Second)
	log.FromContext(ctx).Info("Abandoning a drain that PodDisruptionBudgets block", "nodepool", pp.pool.Name, "nodeclaim", claim.Name,
		"node", claim.Status.NodeName, "blockedFor", waited.String(), "budgets", blocked.Budgets, "why", blocked.String())
	c.Recorder.Eventf(updated, nil, corev1.EventTypeWarning, ReasonDrainAbandoned, "Disrupt",
		"The drain was blocked for %s: %s; the node runs again", waited, blocked)
	c.holdBack(ctx, updated, blocked)
	c.refresh(pp.pass)
	return nil
}

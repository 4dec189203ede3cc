package disruption

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// decision is one node to disrupt, and how.
type decision struct {
	reason v1alpha1.DisruptionReason
	// giveBack sends the node back to standby; otherwise its claim is deleted.
	giveBack bool
	// why is the Event's note.
	why string
}

// act reads the candidate again from the API server and, if it still runs the same
// workload and may still be disrupted, gives it back to the warm pool or removes it. It
// reports whether it acted; a candidate that changed meanwhile is left alone, with an
// Event. Acting takes one node from the pool's budget, and the pass's picture is taken
// anew with the write in it, so that the decisions after this one see it.
func (c *Controller) act(ctx context.Context, pp *poolPass, cand candidate, d decision) (bool, error) {
	claim := &v1alpha1.NodeClaim{}
	if err := c.APIReader.Get(ctx, client.ObjectKeyFromObject(cand.claim), claim); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	pods := &corev1.PodList{}
	if err := c.APIReader.List(ctx, pods, client.MatchingFields{"spec.nodeName": cand.node.Name}); err != nil {
		return false, err
	}
	fresh := candidate{claim: claim, node: cand.node}
	for i := range pods.Items {
		fresh.pods = append(fresh.pods, &pods.Items[i])
	}
	if !runningForPods(claim) || claim.Status.NodeName != cand.node.Name || fresh.workloadKey() != cand.workloadKey() || fresh.blocked() != "" {
		c.event(claim, ReasonDisruptionAborted, "The node changed since it was chosen to go (%s); not disrupting it", d.reason)
		return false, nil
	}
	action := "terminate"
	if d.giveBack {
		action = "standby"
		base := claim.DeepCopy()
		claim.Spec.DesiredState = v1alpha1.DesiredStandby
		if err := c.Client.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return false, client.IgnoreNotFound(ignoreConflict(err))
		}
		c.State.ObserveWrite(claim, base.ResourceVersion)
		pp.standby++
		pp.standbyIn[claim.Status.Zone]++
	} else {
		if err := c.Client.Delete(ctx, claim, client.Preconditions{ResourceVersion: &claim.ResourceVersion}); err != nil {
			return false, client.IgnoreNotFound(ignoreConflict(err))
		}
		c.State.ObserveDeletion(claim)
	}
	c.event(claim, string(d.reason), "%s", d.why)
	metrics.Disruptions.WithLabelValues(pp.pool.Name, string(d.reason), action).Inc()
	pp.budget.take()
	pp.running--
	delete(c.settle, claim.Name)
	c.refresh(pp.pass)
	return true, nil
}

// ignoreConflict treats a lost race as nothing done: the next pass sees the change.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("disrupting: %w", err)
	}
	return nil
}

package disruption

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

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
	acted, outcome, err := c.write(ctx, pp, cand, d)
	metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(d.reason), string(outcome)).Inc()
	if acted {
		logDecision(log.FromContext(ctx), pp.pool.Name, cand, d, outcome)
	} else {
		log.FromContext(ctx).V(1).Info("Did not disrupt the node chosen", "nodepool", pp.pool.Name, "node", cand.node.Name, "nodeclaim", cand.claim.Name, "reason", d.reason, "outcome", outcome)
	}
	return acted, err
}

// write makes the decision's write, and says how it went.
func (c *Controller) write(ctx context.Context, pp *poolPass, cand candidate, d decision) (bool, outcome, error) {
	claim := &v1alpha1.NodeClaim{}
	if err := c.APIReader.Get(ctx, client.ObjectKeyFromObject(cand.claim), claim); err != nil {
		if apierrors.IsNotFound(err) {
			return false, outcomeAborted, nil
		}
		return false, outcomeError, err
	}
	pods := &corev1.PodList{}
	if err := c.APIReader.List(ctx, pods, client.MatchingFields{"spec.nodeName": cand.node.Name}); err != nil {
		return false, outcomeError, err
	}
	fresh := candidate{claim: claim, node: cand.node}
	for i := range pods.Items {
		fresh.pods = append(fresh.pods, &pods.Items[i])
	}
	if !runningForPods(claim) || claim.Status.NodeName != cand.node.Name || fresh.workloadKey() != cand.workloadKey() || fresh.blocked() != "" {
		c.event(claim, ReasonDisruptionAborted, "The node changed since it was chosen to go (%s); not disrupting it", d.reason)
		return false, outcomeAborted, nil
	}
	done := outcomeTerminate
	if d.giveBack {
		done = outcomeStandby
		base := claim.DeepCopy()
		claim.Spec.DesiredState = v1alpha1.DesiredStandby
		if err := c.Client.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return lostRace(err)
		}
		c.State.ObserveWrite(claim, base.ResourceVersion)
		pp.standby++
		pp.standbyIn[claim.Status.Zone]++
	} else {
		if err := c.Client.Delete(ctx, claim, client.Preconditions{ResourceVersion: &claim.ResourceVersion}); err != nil {
			return lostRace(err)
		}
		c.State.ObserveDeletion(claim)
	}
	c.event(claim, string(d.reason), "%s", d.why)
	pp.budget.take()
	pp.running--
	delete(c.settle, claim.Name)
	c.refresh(pp.pass)
	return true, done, nil
}

// lostRace treats a write that lost a race (a conflict, or the claim gone) as nothing
// done: the next pass sees the change. Other errors are errors.
func lostRace(err error) (bool, outcome, error) {
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return false, outcomeAborted, nil
	}
	return false, outcomeError, fmt.Errorf("disrupting: %w", err)
}

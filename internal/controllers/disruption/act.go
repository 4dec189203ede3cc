package disruption

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/pdbs"
)

// decision is one node to disrupt, and how.
type decision struct {
	reason v1beta1.DisruptionReason
	// giveBack sends the node back to standby; otherwise it is asked to be terminated.
	giveBack bool
	// forceful disrupts the node whatever its pods' PodDisruptionBudgets say: expiry in
	// a pool whose terminationGracePeriod bounds the drain, and involuntary disruption.
	forceful bool
	// involuntary disrupts a node that goes anyway (Interrupted, Unhealthy): a change of
	// its workload or do-not-disrupt does not hold it, and it takes none of the budgets.
	involuntary bool
	// why is the Event's note.
	why string
}

// act reads the candidate again from the API server and, if it still runs the same
// workload and may still be disrupted — its pods' PodDisruptionBudgets, read again too,
// letting them go — gives it back to the warm pool or asks it to be terminated. It
// reports whether it acted; a candidate that changed meanwhile is left alone, with an
// Event. Acting takes one node from the pool's budget, and the pass's picture is taken
// anew with the write in it, so that the decisions after this one see it.
func (c *Controller) act(ctx context.Context, pp *poolPass, cand candidate, d decision) (outcome, error) {
	acted, outcome, err := c.write(ctx, pp, cand, d)
	metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(d.reason), string(outcome)).Inc()
	if acted {
		logDecision(log.FromContext(ctx), pp.pool.Name, cand, d, outcome)
	} else {
		log.FromContext(ctx).V(1).Info("Did not disrupt the node chosen", "nodepool", pp.pool.Name, "node", cand.node.Name, "nodeclaim", cand.claim.Name, "reason", d.reason, "outcome", outcome)
	}
	return outcome, err
}

// write makes the decision's write, and says how it went.
func (c *Controller) write(ctx context.Context, pp *poolPass, cand candidate, d decision) (bool, outcome, error) {
	claim := &v1beta1.NodeClaim{}
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
	changed := fresh.workloadKey() != cand.workloadKey() || fresh.blocked() != ""
	if !runningForPods(claim) || claim.Status.NodeName != cand.node.Name || (changed && !d.involuntary) {
		c.event(claim, ReasonDisruptionAborted, "The node changed since it was chosen to go (%s); not disrupting it", d.reason)
		return false, outcomeAborted, nil
	}
	if !d.forceful {
		budgets, err := c.budgetsOf(ctx, fresh.workloads())
		if err != nil {
			return false, outcomeError, err
		}
		if blocked := c.evictionsBlockedUnder(pp.pass, budgets, fresh); blocked != nil {
			c.holdBack(ctx, claim, blocked)
			return false, outcomeBlocked, nil
		}
	}
	base := claim.DeepCopy()
	done := outcomeTerminate
	claim.Spec.DesiredState = v1beta1.DesiredTerminated
	if d.giveBack {
		done = outcomeStandby
		claim.Spec.DesiredState = v1beta1.DesiredStandby
	}
	if err := c.Client.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return lostRace(err)
	}
	c.State.ObserveWrite(claim, base.ResourceVersion)
	if d.giveBack {
		pp.standby++
		pp.standbyIn[claim.Status.Zone]++
	}
	c.event(claim, string(d.reason), "%s", d.why)
	if !d.involuntary {
		pp.budget.take()
	}
	pp.running--
	delete(c.settle, claim.Name)
	c.refresh(pp.pass)
	return true, done, nil
}

// budgetsOf reads from the API server the PodDisruptionBudgets of the pods' namespaces,
// the only ones that can guard them.
func (c *Controller) budgetsOf(ctx context.Context, pods []*corev1.Pod) (pdbs.Set, error) {
	var budgets []*policyv1.PodDisruptionBudget
	read := map[string]bool{}
	for _, pod := range pods {
		if read[pod.Namespace] {
			continue
		}
		read[pod.Namespace] = true
		list := &policyv1.PodDisruptionBudgetList{}
		if err := c.APIReader.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
			return pdbs.Set{}, fmt.Errorf("reading the PodDisruptionBudgets of namespace %s: %w", pod.Namespace, err)
		}
		for i := range list.Items {
			budgets = append(budgets, &list.Items[i])
		}
	}
	return pdbs.NewSet(budgets), nil
}

// lostRace treats a write that lost a race (a conflict, or the claim gone) as nothing
// done: the next pass sees the change. Other errors are errors.
func lostRace(err error) (bool, outcome, error) {
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return false, outcomeAborted, nil
	}
	return false, outcomeError, fmt.Errorf("disrupting: %w", err)
}

package disruption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// Event reasons of the disruptions the cloud or the node's health forces, and of the
// rebalance recommendations a pool chose to act on.
const (
	ReasonInterrupted = string(v1beta1.DisruptionInterrupted)
	ReasonUnhealthy   = string(v1beta1.DisruptionUnhealthy)
	ReasonRebalance   = string(v1beta1.DisruptionRebalance)
)

// Bounds of the drain allowance: how long before an interruption's deadline an
// interrupted node is asked to go even though its replacements do not run yet. The
// allowance is a third of the notice, within these bounds. Its pods must leave before
// the instance dies: a pod's own terminationGracePeriodSeconds is 30 s by default, and
// the drain has to evict them, wait for PodDisruptionBudgets as long as the deadline
// lets it (the lifecycle controller forces the drain DeadlineForceMargin before the
// deadline) and see them gone. A third of EC2's two-minute spot notice is 40 s, which
// leaves 80 s for replacements first: a standby start takes 12-20 s, a cold launch 40-60
// s. A scheduled change comes days ahead; waiting days for a replacement is pointless,
// so the allowance stops growing at MaxDrainAllowance.
const (
	MinDrainAllowance = 30 * time.Second
	MaxDrainAllowance = 10 * time.Minute
)

// interrupted reports whether the cloud gave notice that it takes the claim's instance
// away: a spot interruption warning or a scheduled change, as the interruption
// controller records them. A rebalance recommendation is no interruption.
func interrupted(claim *v1beta1.NodeClaim) bool {
	c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionInterrupted)
	return c != nil && c.Status == "True" &&
		(c.Reason == string(v1beta1.InterruptionSpot) || c.Reason == string(v1beta1.InterruptionScheduledChange))
}

// rebalanceRecommended reports whether the cloud recommends moving off the claim's
// instance and the pool chose to act on that (rebalanceRecommendation Replace).
func rebalanceRecommended(pool *v1beta1.NodePool, claim *v1beta1.NodeClaim) bool {
	c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionInterrupted)
	return c != nil && c.Status == "True" && c.Reason == string(v1beta1.InterruptionRebalance) &&
		pool.Spec.Disruption.RebalanceRecommendation == v1beta1.RebalanceReplace
}

// involuntaryReason says why a claim goes whatever the pool's budgets: Interrupted, or
// Unhealthy in a pool that repairs its nodes; "" when nothing forces it. An
// interruption comes first: the instance goes at its deadline, healthy or not.
func involuntaryReason(pool *v1beta1.NodePool, claim *v1beta1.NodeClaim) v1beta1.DisruptionReason {
	switch {
	case interrupted(claim):
		return v1beta1.DisruptionInterrupted
	case pool.Spec.Repair.RepairEnabled() && meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionUnhealthy):
		return v1beta1.DisruptionUnhealthy
	}
	return ""
}

// budgeted reports whether disruptions for reason count against the pool's budgets.
func budgeted(reason v1beta1.DisruptionReason) bool {
	return reason != v1beta1.DisruptionInterrupted && reason != v1beta1.DisruptionUnhealthy
}

// drainBy is when an interrupted claim must be asked to go at the latest, replaced or
// not: its deadline less the drain allowance. ok is false without a deadline.
func drainBy(claim *v1beta1.NodeClaim) (at time.Time, ok bool) {
	notice := claim.Status.Interruption
	if notice == nil || notice.Deadline == nil {
		return time.Time{}, false
	}
	allowance := min(max(notice.Deadline.Sub(notice.NoticeTime.Time)/3, MinDrainAllowance), MaxDrainAllowance)
	return notice.Deadline.Add(-allowance), true
}

// disruptInvoluntarily ends the pool's interrupted claims that hold no pods, replaces
// its interrupted running nodes and, within the repair limits, its unhealthy ones, and
// returns the candidates left to voluntary disruption: an interrupted or unhealthy node
// is never given back or consolidated.
func (c *Controller) disruptInvoluntarily(ctx context.Context, pp *poolPass, claims []*v1beta1.NodeClaim, cands []candidate) ([]candidate, error) {
	var rest, interruptedNodes, unhealthyNodes []candidate
	isCandidate := map[string]bool{}
	for _, cand := range cands {
		isCandidate[cand.claim.Name] = true
		switch involuntaryReason(pp.pool, cand.claim) {
		case v1beta1.DisruptionInterrupted:
			interruptedNodes = append(interruptedNodes, cand)
		case v1beta1.DisruptionUnhealthy:
			unhealthyNodes = append(unhealthyNodes, cand)
		default:
			rest = append(rest, cand)
		}
	}
	c.forgetRecovered(pp, claims)
	err := c.endInterruptedIdle(ctx, pp, claims, isCandidate)
	for _, cand := range interruptedNodes {
		err = errors.Join(err, c.replaceInvoluntarily(ctx, pp, cand, v1beta1.DisruptionInterrupted))
	}
	// The longest unhealthy are repaired first.
	slices.SortStableFunc(unhealthyNodes, func(a, b candidate) int { return unhealthySince(a.claim).Compare(unhealthySince(b.claim)) })
	repairs := c.repairsLeft(ctx, pp, claims)
	for _, cand := range unhealthyNodes {
		if _, underway := c.replacing[cand.claim.Name]; !underway {
			if repairs <= 0 {
				log.FromContext(ctx).V(1).Info("The pool's repair limit is reached; the unhealthy node waits", "nodepool", pp.pool.Name, "nodeclaim", cand.claim.Name)
				continue
			}
			repairs--
		}
		err = errors.Join(err, c.replaceInvoluntarily(ctx, pp, cand, v1beta1.DisruptionUnhealthy))
	}
	return rest, err
}

// forgetRecovered drops the involuntary replacements of the pool's claims that no
// longer need one (an unhealthy node that recovered): the node serves again, and the
// replacements started for it serve as any node does.
func (c *Controller) forgetRecovered(pp *poolPass, claims []*v1beta1.NodeClaim) {
	forced := map[string]bool{}
	for _, claim := range claims {
		forced[claim.Name] = involuntaryReason(pp.pool, claim) != ""
	}
	for name, r := range c.replacing {
		if r.pool == pp.pool.Name && !budgeted(r.reason) && !r.done && !forced[name] {
			delete(c.replacing, name)
		}
	}
}

// endInterruptedIdle asks the pool's interrupted claims that hold no pods — standing
// by, stopping, launching, warming up, starting, or draining to stand by — to be
// terminated: their instance goes anyway, and the pool controller refills the warm pool
// with a new one.
func (c *Controller) endInterruptedIdle(ctx context.Context, pp *poolPass, claims []*v1beta1.NodeClaim, isCandidate map[string]bool) error {
	var errs []error
	for _, claim := range claims {
		if !interrupted(claim) || isCandidate[claim.Name] || !claim.DeletionTimestamp.IsZero() || claim.Spec.DesiredState == v1beta1.DesiredTerminated {
			continue
		}
		errs = append(errs, c.askTerminated(ctx, pp, claim, v1beta1.DisruptionInterrupted,
			fmt.Sprintf("%s while %s; terminating it", interruptionState(claim), claim.Status.Phase)))
	}
	return errors.Join(errs...)
}

// askTerminated asks a claim that serves no pods to be terminated, for reason.
func (c *Controller) askTerminated(ctx context.Context, pp *poolPass, claim *v1beta1.NodeClaim, reason v1beta1.DisruptionReason, why string) error {
	updated := claim.DeepCopy()
	updated.Spec.DesiredState = v1beta1.DesiredTerminated
	if err := c.Client.Patch(ctx, updated, client.MergeFromWithOptions(claim, client.MergeFromWithOptimisticLock{})); err != nil {
		_, done, err := lostRace(err)
		metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(reason), string(done)).Inc()
		return err
	}
	c.State.ObserveWrite(updated, claim.ResourceVersion)
	metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(reason), string(outcomeTerminate)).Inc()
	c.event(updated, string(reason), "%s", why)
	log.FromContext(ctx).Info("Disrupting node", "nodepool", pp.pool.Name, "node", claim.Status.NodeName, "nodeclaim", claim.Name,
		"reason", string(reason), "action", "terminate", "why", why, "pods", 0)
	c.refresh(pp.pass)
	return nil
}

// interruptionState says what the cloud announced for the claim's instance.
func interruptionState(claim *v1beta1.NodeClaim) string {
	notice := claim.Status.Interruption
	if notice == nil {
		return "The cloud takes the node's instance away"
	}
	if notice.Deadline == nil {
		return fmt.Sprintf("The cloud takes the node's instance away (%s)", notice.Kind)
	}
	return fmt.Sprintf("The cloud takes the node's instance away at %s (%s)", notice.Deadline.UTC().Format(time.RFC3339), notice.Kind)
}

// involuntaryState says why a node goes whatever the budgets.
func involuntaryState(claim *v1beta1.NodeClaim, reason v1beta1.DisruptionReason) string {
	if reason == v1beta1.DisruptionInterrupted {
		return interruptionState(claim)
	}
	return fmt.Sprintf("The node is unhealthy (%s)", unhealthyReason(claim))
}

// staleState says why a stale node is replaced.
func staleState(reason v1beta1.DisruptionReason) string {
	if reason == v1beta1.DisruptionRebalance {
		return "The cloud recommends moving off the node's instance (a rebalance recommendation)"
	}
	return fmt.Sprintf("The node is %s", strings.ToLower(string(reason)))
}

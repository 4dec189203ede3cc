package disruption

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

// defaultConsolidateAfter applies when a pool sets none (the API server defaults it too).
const defaultConsolidateAfter = 30 * time.Second

// Pass looks at every pool once, gives back or terminates the nodes whose time came, and
// returns when the next candidate's wait ends (zero when none waits).
func (c *Controller) Pass(ctx context.Context) (time.Time, error) {
	if c.empty == nil {
		c.empty = emptiness{}
	}
	pools := &v1alpha1.NodePoolList{}
	if err := c.Client.List(ctx, pools); err != nil {
		return time.Time{}, err
	}
	pending := c.State.Snapshot().Pending
	now := c.Clock.Now()
	live := map[string]bool{}
	var next time.Time
	var errs []error
	for i := range pools.Items {
		pool := &pools.Items[i]
		if !pool.DeletionTimestamp.IsZero() {
			continue
		}
		poolNext, err := c.passPool(ctx, pool, pending, now, live)
		errs = append(errs, err)
		if !poolNext.IsZero() && (next.IsZero() || poolNext.Before(next)) {
			next = poolNext
		}
	}
	c.empty.forgetAllBut(live)
	return next, errors.Join(errs...)
}

// passPool handles one pool: it finds its empty nodes, and acts on those whose
// consolidateAfter passed, oldest first, as far as the budget allows.
func (c *Controller) passPool(ctx context.Context, pool *v1alpha1.NodePool, pending []*corev1.Pod, now time.Time, live map[string]bool) (time.Time, error) {
	claims := &v1alpha1.NodeClaimList{}
	if err := c.Client.List(ctx, claims, client.MatchingFields{indexes.ClaimNodePool: pool.Name}); err != nil {
		return time.Time{}, err
	}
	candidates, err := c.candidates(ctx, claims.Items)
	if err != nil {
		return time.Time{}, err
	}
	after := defaultConsolidateAfter
	if pool.Spec.Disruption.ConsolidateAfter != nil {
		after = pool.Spec.Disruption.ConsolidateAfter.Duration
	}
	var next time.Time
	var due []candidate
	for _, cand := range candidates {
		live[cand.claim.Name] = true
		emptySince := c.empty.observe(cand, now)
		if emptySince.IsZero() {
			continue
		}
		if ready := emptySince.Add(after); now.Before(ready) {
			if next.IsZero() || ready.Before(next) {
				next = ready
			}
			continue
		}
		due = append(due, cand)
	}
	if len(due) == 0 {
		return next, nil
	}
	sort.SliceStable(due, func(a, b int) bool { return c.empty[due[a].claim.Name].Before(c.empty[due[b].claim.Name]) })

	total, disrupting, standby := census(claims.Items)
	budget, err := allowed(pool.Spec.Disruption.Budgets, v1alpha1.DisruptionEmpty, total, now)
	if err != nil {
		c.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, "InvalidBudget", "Disrupt", "No node is disrupted while a budget cannot be read: %v", err)
		return next, nil
	}
	left := budget - disrupting
	ceiling := max(ptr.Deref(pool.Spec.Standby.Max, pool.Spec.Standby.Min), pool.Spec.Standby.Min)
	for _, cand := range due {
		if why := cand.blocked(); why != "" {
			log.FromContext(ctx).V(1).Info("Not disrupting an empty node", "nodeclaim", cand.claim.Name, "because", why)
			continue
		}
		if neededBy(cand, pending) {
			log.FromContext(ctx).V(1).Info("Not disrupting an empty node that waiting pods need", "nodeclaim", cand.claim.Name)
			continue
		}
		if left <= 0 {
			log.FromContext(ctx).V(1).Info("The pool's disruption budget is used up", "nodepool", pool.Name, "budget", budget, "disrupting", disrupting)
			break
		}
		giveBack := standby < int(ceiling)
		acted, err := c.act(ctx, pool, cand, giveBack, now.Sub(c.empty[cand.claim.Name]))
		if err != nil {
			return next, err
		}
		if acted {
			left--
			if giveBack {
				standby++
			}
			delete(c.empty, cand.claim.Name)
		}
	}
	return next, nil
}

// candidates are the pool's running claims with their Node and its pods.
func (c *Controller) candidates(ctx context.Context, claims []v1alpha1.NodeClaim) ([]candidate, error) {
	var out []candidate
	for i := range claims {
		claim := &claims[i]
		if !runningForPods(claim) {
			continue
		}
		node := &corev1.Node{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: claim.Status.NodeName}, node); err != nil {
			if client.IgnoreNotFound(err) == nil {
				continue
			}
			return nil, err
		}
		pods := &corev1.PodList{}
		if err := c.Client.List(ctx, pods, client.MatchingFields{indexes.PodNodeName: node.Name}); err != nil {
			return nil, err
		}
		out = append(out, candidate{claim: claim, node: node, pods: pods.Items})
	}
	return out, nil
}

// runningForPods reports whether a claim runs, asked to, with a Node.
func runningForPods(claim *v1alpha1.NodeClaim) bool {
	return claim.DeletionTimestamp.IsZero() && claim.Spec.DesiredState == v1alpha1.DesiredRunning &&
		claim.Status.Phase == v1alpha1.PhaseRunning && claim.Status.NodeName != ""
}

// census counts a pool's claims: those that run or are being disrupted (what budget
// percentages are of), those being disrupted now (draining to stand by, or terminating
// while asked to run), and those asked to stand by.
func census(claims []v1alpha1.NodeClaim) (total, disrupting, standby int) {
	for i := range claims {
		claim := &claims[i]
		deleting := !claim.DeletionTimestamp.IsZero()
		switch {
		case claim.Status.Phase == v1alpha1.PhaseDraining,
			deleting && claim.Spec.DesiredState == v1alpha1.DesiredRunning && claim.Status.NodeName != "":
			total++
			disrupting++
		case claim.Status.Phase == v1alpha1.PhaseRunning:
			total++
		}
		if !deleting && claim.Spec.DesiredState == v1alpha1.DesiredStandby {
			standby++
		}
	}
	return total, disrupting, standby
}

// neededBy reports whether pods waiting for capacity now would be placed on the
// candidate's Node: freeing it would only make provisioning start another.
func neededBy(cand candidate, pending []*corev1.Pod) bool {
	if len(pending) == 0 {
		return false
	}
	pods := make([]*corev1.Pod, 0, len(cand.pods))
	for i := range cand.pods {
		pods = append(pods, &cand.pods[i])
	}
	result := scheduling.Solve(scheduling.Input{Pods: pending, Nodes: []scheduling.Node{{Node: cand.node, Pods: pods}}})
	return len(result.Existing) > 0
}

// act reads the candidate again from the API server and, if it is still empty and may
// still be disrupted, gives it back to the warm pool or removes it. It reports whether it
// acted; a candidate that changed meanwhile is left alone, with an Event.
func (c *Controller) act(ctx context.Context, pool *v1alpha1.NodePool, cand candidate, giveBack bool, emptyFor time.Duration) (bool, error) {
	claim := &v1alpha1.NodeClaim{}
	if err := c.APIReader.Get(ctx, client.ObjectKeyFromObject(cand.claim), claim); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	pods := &corev1.PodList{}
	if err := c.APIReader.List(ctx, pods, client.MatchingFields{"spec.nodeName": cand.node.Name}); err != nil {
		return false, err
	}
	fresh := candidate{claim: claim, node: cand.node, pods: pods.Items}
	if !runningForPods(claim) || claim.Status.NodeName != cand.node.Name || !fresh.empty() || fresh.blocked() != "" {
		c.event(claim, ReasonDisruptionAborted, "The Node changed since it was found empty; not disrupting it")
		return false, nil
	}
	empty := emptyFor.Round(time.Second)
	if giveBack {
		base := claim.DeepCopy()
		claim.Spec.DesiredState = v1alpha1.DesiredStandby
		if err := c.Client.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return false, client.IgnoreNotFound(ignoreConflict(err))
		}
		c.event(claim, ReasonEmpty, "Node empty for %s; giving it back to the warm pool", empty)
		metrics.Disruptions.WithLabelValues(pool.Name, string(v1alpha1.DisruptionEmpty), "standby").Inc()
		return true, nil
	}
	if err := c.Client.Delete(ctx, claim, client.Preconditions{ResourceVersion: &claim.ResourceVersion}); err != nil {
		return false, client.IgnoreNotFound(ignoreConflict(err))
	}
	c.event(claim, ReasonEmpty, "Node empty for %s and the warm pool is full; terminating it", empty)
	metrics.Disruptions.WithLabelValues(pool.Name, string(v1alpha1.DisruptionEmpty), "terminate").Inc()
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

package disruption

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/nodeclass"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/internal/simulation"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/internal/windows"
)

// defaultConsolidateAfter applies when a pool sets none (the API server defaults it too).
const defaultConsolidateAfter = 30 * time.Second

// pass is what one pass over the pools shares: the moment, the cluster's picture, and
// the simulation's input, built when first needed.
type pass struct {
	now   time.Time
	snap  state.Snapshot
	input *scheduling.Input
	// next is when the pass after should run at the latest: a candidate's wait ends, or
	// a node expires. Zero: at the next poll.
	next time.Time
}

// wakeAt makes the next pass run by t.
func (p *pass) wakeAt(t time.Time) {
	if !t.IsZero() && (p.next.IsZero() || t.Before(p.next)) {
		p.next = t
	}
}

// simulationInput is the cluster as the scheduling simulation sees it, for this pass.
func (c *Controller) simulationInput(ctx context.Context, p *pass) (scheduling.Input, error) {
	if p.input == nil {
		in, err := simulation.Builder{Client: c.Client, Cloud: c.Cloud, Clock: c.Clock, Calendar: c.Calendar}.Input(ctx, p.snap, nil)
		if err != nil {
			return in, err
		}
		p.input = &in
	}
	return *p.input, nil
}

// Pass looks at every pool once, gives back, terminates or replaces the nodes whose time
// came, and returns when the next candidate's wait ends (zero when none waits).
func (c *Controller) Pass(ctx context.Context) (time.Time, error) {
	if c.settle == nil {
		c.settle, c.replacing = settling{}, map[string]*replacement{}
	}
	pools := &v1alpha1.NodePoolList{}
	if err := c.Client.List(ctx, pools); err != nil {
		return time.Time{}, err
	}
	p := &pass{now: c.Clock.Now(), snap: c.State.Snapshot()}
	live := map[string]bool{}
	var errs []error
	for i := range pools.Items {
		pool := &pools.Items[i]
		if !pool.DeletionTimestamp.IsZero() {
			continue
		}
		errs = append(errs, c.passPool(ctx, p, pool, live))
	}
	c.settle.forgetAllBut(live)
	for name := range c.replacing {
		if !live[name] {
			delete(c.replacing, name)
		}
	}
	return p.next, errors.Join(errs...)
}

// poolPass is one pool's part of a pass.
type poolPass struct {
	*pass
	pool   *v1alpha1.NodePool
	budget *budget
	// standby counts the claims asked to stand by, and ceiling is how many the pool keeps.
	standby, ceiling int
	// running counts the claims asked to run; the active window keeps minRunning of them.
	running, minRunning int
	// overCap is set while the pool has more claims than its cap on nodes allows (a
	// window may lower it, to 0 at night): nodes given back are terminated then.
	overCap bool
}

// giveBack reports whether a node of the pool that is not stale goes back to standby
// rather than away: while the warm pool is below its ceiling and the pool within its cap.
func (pp *poolPass) giveBack(cand candidate) bool {
	return cand.stale == "" && pp.standby < pp.ceiling && !pp.overCap
}

// idleMayGo is how many more running nodes may be given back or removed as idle
// (empty or under-used) without going below the active window's running minimum.
func (pp *poolPass) idleMayGo() int { return pp.running - pp.minRunning }

// passPool handles one pool: stale nodes are replaced, then empty nodes, then (under
// WhenUnderutilized) nodes whose pods fit elsewhere, are given back, each once its
// workload has not changed for consolidateAfter, as far as the budgets allow.
func (c *Controller) passPool(ctx context.Context, p *pass, pool *v1alpha1.NodePool, seen map[string]bool) error {
	claims := &v1alpha1.NodeClaimList{}
	if err := c.Client.List(ctx, claims, client.MatchingFields{indexes.ClaimNodePool: pool.Name}); err != nil {
		return err
	}
	for i := range claims.Items {
		seen[claims.Items[i].Name] = true
	}
	if pool.Spec.Paused || pool.Spec.KillSwitch {
		return nil // paused: nothing changes; kill switch: the pool controller removes all
	}
	targets, err := windows.For(pool, windows.Calendar(c.Calendar, c.Clock).Now())
	if err != nil {
		log.FromContext(ctx).V(1).Info("The pool's windows cannot be read; its spec's targets hold", "nodepool", pool.Name, "error", err.Error())
	}
	hash, err := c.templateHash(ctx, pool)
	if err != nil {
		return err
	}
	candidates, err := c.candidates(ctx, pool, claims.Items, hash, p.now)
	if err != nil {
		return err
	}
	n := census(claims.Items)
	pp := &poolPass{pass: p, pool: pool, standby: n.standby, ceiling: int(targets.MaxStandby), running: n.running, minRunning: int(targets.MinRunning),
		overCap: targets.MaxNodes != nil && n.live > int(*targets.MaxNodes),
		budget:  &budget{budgets: pool.Spec.Disruption.Budgets, total: n.total, disrupting: n.disrupting + c.replacementsUnderWay(pool.Name), now: p.now}}

	after := defaultConsolidateAfter
	if pool.Spec.Disruption.ConsolidateAfter != nil {
		after = pool.Spec.Disruption.ConsolidateAfter.Duration
	}
	protected := c.replacements()
	var stale, empty, busy []candidate
	for _, cand := range candidates {
		if expires := claimtemplate.ExpiresAt(pool, cand.claim); expires.After(p.now) {
			p.wakeAt(expires)
		}
		if protected[cand.claim.Name] {
			// A replacement waits for the pods of the node it replaces: it is not idle.
			delete(c.settle, cand.claim.Name)
			continue
		}
		since := c.settle.observe(cand, p.now)
		settled := !p.now.Before(since.Add(after))
		if !settled {
			p.wakeAt(since.Add(after))
		}
		// A stale node is replaced; once it has been empty for consolidateAfter it may
		// also go as an empty one, within the budget for Empty.
		if cand.stale != "" && !(settled && cand.empty()) {
			stale = append(stale, cand)
			continue
		}
		if !settled {
			continue
		}
		if cand.empty() {
			empty = append(empty, cand)
		} else {
			busy = append(busy, cand)
		}
	}
	c.replaceStale(ctx, pp, stale)
	err = c.giveBackEmpty(ctx, pp, empty)
	if pool.Spec.Disruption.ConsolidationPolicy == v1alpha1.ConsolidationWhenUnderutilized {
		err = errors.Join(err, c.consolidate(ctx, pp, busy))
	}
	if pp.budget.err != nil {
		c.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, ReasonInvalidBudget, "Disrupt", "No node is disrupted while a budget cannot be read: %v", pp.budget.err)
	}
	return err
}

// templateHash is the hash of the pool's current template, or "" while its node class
// is missing (nothing counts as drifted then).
func (c *Controller) templateHash(ctx context.Context, pool *v1alpha1.NodePool) (string, error) {
	class, err := nodeclass.Get(ctx, c.Client, pool.Spec.Template.NodeClassRef)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return claimtemplate.Hash(pool, class)
}

// candidates are the pool's running claims with their Node and its pods.
func (c *Controller) candidates(ctx context.Context, pool *v1alpha1.NodePool, claims []v1alpha1.NodeClaim, hash string, now time.Time) ([]candidate, error) {
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
		out = append(out, candidate{claim: claim, node: node, pods: pods.Items, stale: claimtemplate.Stale(pool, claim, hash, now)})
	}
	return out, nil
}

// runningForPods reports whether a claim runs, asked to, with a Node.
func runningForPods(claim *v1alpha1.NodeClaim) bool {
	return claim.DeletionTimestamp.IsZero() && claim.Spec.DesiredState == v1alpha1.DesiredRunning &&
		claim.Status.Phase == v1alpha1.PhaseRunning && claim.Status.NodeName != ""
}

// counts are what a pool's claims add up to for disruption.
type counts struct {
	// total run or are being disrupted (what budget percentages are of); disrupting
	// are being disrupted now (draining to stand by, or terminating while asked to run).
	total, disrupting int
	// live are not being deleted; of those, standby are asked to stand by and running
	// to run.
	live, standby, running int
}

// census counts a pool's claims.
func census(claims []v1alpha1.NodeClaim) counts {
	var n counts
	for i := range claims {
		claim := &claims[i]
		deleting := !claim.DeletionTimestamp.IsZero()
		switch {
		case claim.Status.Phase == v1alpha1.PhaseDraining,
			deleting && claim.Spec.DesiredState == v1alpha1.DesiredRunning && claim.Status.NodeName != "":
			n.total++
			n.disrupting++
		case claim.Status.Phase == v1alpha1.PhaseRunning:
			n.total++
		}
		if deleting {
			continue
		}
		n.live++
		switch claim.Spec.DesiredState {
		case v1alpha1.DesiredStandby:
			n.standby++
		case v1alpha1.DesiredRunning:
			n.running++
		}
	}
	return n
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

package disruption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

// Replacing a node with a cheaper one is consolidation's other half, as Karpenter's
// single-node consolidation does it: a settled node whose pods do not fit on the other
// nodes, but would on one new node that costs less (worthReplacing), is replaced by it,
// the new node running before the old one drains. Its reason is Underutilized, within
// the budgets for it, under WhenEmptyOrUnderutilized only. It is how a pool that runs
// spot goes back to spot: spot nodes interrupted, or refused while spot had no capacity,
// are replaced by on-demand ones — standby nodes started, or launches — and once spot is
// offered again those are replaced by spot nodes. The old node then goes back to standby
// while the warm pool has room, as every node given back does (pass.go, giveBack): an
// on-demand node parked is the warm pool's insurance again. Otherwise it is terminated.
//
// Only a launch counts: starting a standby node (on-demand, as all of them are) to
// replace a running one saves nothing. The simulation is the one consolidation runs
// (room), the node's pods and those waiting now placed on the nodes that run and stay,
// and the pools' templates; it must place every pod of the node with exactly one new
// claim for them alone, and leave the waiting pods their room.

// replaceWithCheaper carries the pool's replacements with cheaper nodes on — underWay are
// the candidates being replaced — and, under WhenEmptyOrUnderutilized, starts at most one
// more among busy, as the budget for Underutilized allows.
func (c *Controller) replaceWithCheaper(ctx context.Context, pp *poolPass, underWay, busy []candidate) error {
	c.forgetGivenBack(pp)
	var errs []error
	for _, cand := range underWay {
		errs = append(errs, c.finishCheaper(ctx, pp, cand))
	}
	if pp.pool.Spec.Disruption.ConsolidationPolicy == v1beta1.ConsolidationWhenEmptyOrUnderutilized {
		errs = append(errs, c.startCheaper(ctx, pp, busy))
	}
	return errors.Join(errs...)
}

// replacingWithCheaper reports whether the claim's cheaper replacement is under way.
func (c *Controller) replacingWithCheaper(claim string) bool {
	r, ok := c.replacing[claim]
	return ok && r.cheaper && !r.done
}

// forgetGivenBack forgets the pool's replaced nodes once they no longer run pods (their
// drain ended, or they are gone): until then their replacements are waiting for the
// pods and must not look idle, afterwards they are nodes as any other. A node parked
// in standby stays a claim, so its record would otherwise outlive its purpose.
func (c *Controller) forgetGivenBack(pp *poolPass) {
	for name, r := range c.replacing {
		if !r.cheaper || !r.done || r.pool != pp.pool.Name {
			continue
		}
		i := slices.IndexFunc(pp.snap.All, func(claim *v1beta1.NodeClaim) bool { return claim.Name == name })
		if i < 0 || (pp.snap.All[i].Status.Phase != v1beta1.PhaseRunning && pp.snap.All[i].Status.Phase != v1beta1.PhaseDraining) {
			delete(c.replacing, name)
		}
	}
}

// finishCheaper gives back a node whose cheaper replacement runs: to standby while the
// warm pool has room, else away. A replacement lost is planned again if still worth
// it; a node annotated do-not-disrupt since keeps running, and its replacement serves
// as any node does.
func (c *Controller) finishCheaper(ctx context.Context, pp *poolPass, cand candidate) error {
	r := c.replacing[cand.claim.Name]
	if why := cand.blocked(); why != "" {
		delete(c.replacing, cand.claim.Name)
		log.FromContext(ctx).Info("Giving up a cheaper replacement", "nodepool", pp.pool.Name, "nodeclaim", cand.claim.Name, "replacements", r.by, "because", why)
		return nil
	}
	if refused, err := c.dropRefusedCheaper(ctx, r); err != nil || refused != "" {
		if refused != "" {
			delete(c.replacing, cand.claim.Name)
			log.FromContext(ctx).Info("Giving up a cheaper replacement: the cloud has no capacity for it", "nodepool", pp.pool.Name, "nodeclaim", cand.claim.Name, "replacement", refused)
		}
		return err
	}
	ready, lost := c.replacementsReady(ctx, r)
	switch {
	case lost:
		delete(c.replacing, cand.claim.Name)
		return nil
	case !ready:
		return nil
	}
	d := decision{reason: v1beta1.DisruptionUnderutilized, giveBack: pp.giveBack(cand)}
	d.why = fmt.Sprintf("Its cheaper replacement runs (%s); terminating it", strings.Join(r.by, ", "))
	if d.giveBack {
		d.why = fmt.Sprintf("Its cheaper replacement runs (%s); giving it back to the warm pool", strings.Join(r.by, ", "))
	}
	done, err := c.act(ctx, pp, cand, d)
	switch done {
	case outcomeStandby, outcomeTerminate:
		r.done = true
		pp.budget.disrupting-- // it counted already, as a replacement under way
	case outcomeBlocked:
		c.waitForBudgets(ctx, pp, cand, r)
	}
	return err
}

// startCheaper replaces the first of the settled busy nodes, cheapest to disrupt first,
// that a cheaper node would replace, and that may go: not annotated do-not-disrupt, its
// pods owned by controllers and let go by their PodDisruptionBudgets, not needed by the
// pods waiting. One a pass: the next sees it under way.
func (c *Controller) startCheaper(ctx context.Context, pp *poolPass, busy []candidate) error {
	if len(busy) == 0 || pp.budget.left(v1beta1.DisruptionUnderutilized) <= 0 {
		return nil
	}
	in, err := c.simulationInput(ctx, pp.pass)
	if err != nil {
		return err
	}
	if c.podsWaitingFor(pp, in) > 0 {
		return nil // consolidate said so already
	}
	needing := pp.needingRoom()
	r := newRoom(in, needing)
	cands := slices.Clone(busy)
	c.cheapestToDisruptFirst(cands)
	for _, cand := range cands {
		if !cand.settled || !pp.stillRuns(cand) {
			continue
		}
		why := cand.blocked()
		if why == "" {
			why = cand.unmovable()
		}
		if why == "" && neededBy(in, cand, needing) {
			why = "pods waiting for room would be placed on it"
		}
		if why == "" && c.evictionsBlocked(pp.pass, cand) != nil {
			why = "a PodDisruptionBudget does not let its pods go now"
		}
		if why != "" {
			log.FromContext(ctx).V(1).Info("Not replacing a node with a cheaper one", "nodeclaim", cand.claim.Name, "because", why)
			continue
		}
		if plan, ok := r.cheaperPlan(in.Pools, cand); ok {
			return c.startCheaperPlan(ctx, pp, cand, plan)
		}
	}
	return nil
}

// stillRuns reports whether the candidate's claim still runs, asked to, in the pass's
// picture: a decision earlier in the pass may have given it back.
func (p *pass) stillRuns(cand candidate) bool {
	i := slices.IndexFunc(p.snap.All, func(claim *v1beta1.NodeClaim) bool { return claim.Name == cand.claim.Name })
	return i >= 0 && runningForPods(p.snap.All[i])
}

// cheaperPlan is a replacement with a cheaper node: the launch, narrowed to what is worth
// it, with what it and the node cost.
type cheaperPlan struct {
	launch        scheduling.Launch
	current, next offer
	pools         []scheduling.Pool
}

// cheaperPlan simulates the candidate's pods, and the pods waiting, on the room's nodes
// without the candidate and on new claims of pools, and returns the plan when they need
// exactly one new claim, for the candidate's pods alone, that is worth the replacement.
func (r room) cheaperPlan(pools []scheduling.Pool, cand candidate) (cheaperPlan, bool) {
	current, known := offerOf(typesOf(pools, cand.claim.Spec.NodePool), cand.claim)
	if !known || !anyWorth(pools, current) {
		return cheaperPlan{}, false // no simulation where no offering would do
	}
	moving := cand.workloads()
	sim := r.in
	sim.Pools, sim.Pods, sim.Nodes = pools, append(slices.Clone(moving), r.pending...), nil
	for _, n := range r.in.Nodes {
		if n.Node.Name != cand.node.Name {
			sim.Nodes = append(sim.Nodes, n)
		}
	}
	result := scheduling.Solve(sim)
	if len(result.Launches) != 1 {
		return cheaperPlan{}, false // all fit elsewhere (consolidate's case), or more than one node
	}
	launched := map[*corev1.Pod]bool{}
	for _, pod := range result.Launches[0].Pods {
		launched[pod] = true
	}
	placedNow := 0
	for _, pod := range moving {
		if _, onNode := result.Existing[pod]; onNode {
			placedNow++
		} else if !launched[pod] {
			return cheaperPlan{}, false
		}
	}
	if len(launched) > len(moving) || len(result.Existing)-placedNow < r.placed {
		return cheaperPlan{}, false // the new node would be for waiting pods too, or takes their room
	}
	l := result.Launches[0]
	narrowed, next, ok := cheaperLaunch(l, typesOf(pools, l.Pool), current)
	if !ok {
		return cheaperPlan{}, false
	}
	return cheaperPlan{launch: narrowed, current: current, next: next, pools: pools}, true
}

// anyWorth reports whether any available offering of the pools is worth replacing a
// node bought as current with, whatever it holds: most nodes, once the pool is back on
// spot, have none, and a pass then runs no simulation for them.
func anyWorth(pools []scheduling.Pool, current offer) bool {
	for _, p := range pools {
		for _, it := range p.InstanceTypes {
			for _, o := range it.Offerings {
				if o.Available && worthReplacing(current, offer{price: o.PricePerHour, capacityType: o.CapacityType}) {
					return true
				}
			}
		}
	}
	return false
}

// typesOf are the instance types of the named pool in the simulation's pools.
func typesOf(pools []scheduling.Pool, name string) []*cloudprovider.InstanceType {
	for _, p := range pools {
		if p.Pool.Name == name {
			return p.InstanceTypes
		}
	}
	return nil
}

// startCheaperPlan launches the replacement and records it, taking one node from the
// pool's budget for Underutilized.
func (c *Controller) startCheaperPlan(ctx context.Context, pp *poolPass, cand candidate, plan cheaperPlan) error {
	by, holds, err := c.startReplacements(ctx, pp, scheduling.Input{Pools: plan.pools}, scheduling.Result{Launches: []scheduling.Launch{plan.launch}})
	if len(by) == 0 {
		if err != nil {
			metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(v1beta1.DisruptionUnderutilized), string(outcomeError)).Inc()
		}
		return err
	}
	c.replacing[cand.claim.Name] = &replacement{pool: pp.pool.Name, node: cand.node.Name, reason: v1beta1.DisruptionUnderutilized, by: by, holds: holds, cheaper: true}
	pp.budget.take()
	why := fmt.Sprintf("Its pods would run on a %s node (%s) for $%.4f an hour, less than this %s %s's $%.4f; replacing it with %s before it drains",
		plan.next.capacityType, plan.launch.InstanceTypes[0], plan.next.price, cand.claim.Status.CapacityType, cand.claim.Status.InstanceType, plan.current.price, by[0])
	c.event(cand.claim, ReasonUnderutilized, "%s", why)
	workloads := cand.workloads()
	log.FromContext(ctx).Info("Replacing node with a cheaper one", "nodepool", pp.pool.Name, "node", cand.node.Name, "nodeclaim", cand.claim.Name,
		"reason", string(v1beta1.DisruptionUnderutilized), "action", "replace", "replacements", by, "why", why, "pods", len(workloads), "podNames", podutil.Names(workloads))
	metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(v1beta1.DisruptionUnderutilized), string(outcomeReplace)).Inc()
	c.refresh(pp.pass)
	return err
}

// dropRefusedCheaper deletes the replacement claims of r whose launch the cloud refused
// for lack of capacity, and names one of them ("" when none was). No pod waits on a
// cheaper replacement, as none waits on a standby claim: the node it would replace runs
// on, and the offerings refused are marked unavailable, so that the next plan, if any,
// looks elsewhere, instead of a claim waiting in Launching for capacity that may not
// come back.
func (c *Controller) dropRefusedCheaper(ctx context.Context, r *replacement) (string, error) {
	refused := ""
	for _, name := range r.by {
		claim := &v1beta1.NodeClaim{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: name}, claim); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return "", err
		}
		launched := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionLaunched)
		if claim.Status.InstanceID != "" || launched == nil || launched.Status != metav1.ConditionFalse || launched.Reason != string(cloudprovider.CodeInsufficientCapacity) {
			continue
		}
		if err := c.Client.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
			return "", fmt.Errorf("deleting cheaper replacement %s, which the cloud has no capacity for: %w", name, err)
		}
		refused = name
	}
	return refused, nil
}

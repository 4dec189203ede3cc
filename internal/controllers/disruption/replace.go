package disruption

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/internal/schedulinginput"
)

// replacement is a stale claim being replaced: its Node, the claims that will hold its
// pods and which pods each holds, and whether it was deleted once they ran.
type replacement struct {
	pool   string
	node   string
	reason v1beta1.DisruptionReason
	by     []string
	holds  map[string][]*corev1.Pod
	done   bool
	// cheaper marks a replacement with a cheaper node (cheaper.go): once it runs, the node
	// goes back to standby when the warm pool has room, and is terminated otherwise.
	cheaper bool
	// blockedSince is when a PodDisruptionBudget first kept the node from draining once
	// its replacements ran (zero while none does): past the pool's bound for blocked
	// drains the replacement is given up, and the node's place in the budget with it.
	blockedSince time.Time
}

// replacedNodes names the Nodes whose replacements are under way: they are going, so
// they are no room for other nodes' pods.
func (c *Controller) replacedNodes() map[string]bool {
	out := map[string]bool{}
	for _, r := range c.replacing {
		if !r.done {
			out[r.node] = true
		}
	}
	return out
}

// holdReplacements puts the pods of each node being replaced on the claims that replace
// it, in a simulation's input: that room is taken, and a later decision must not count
// it for other pods.
func (c *Controller) holdReplacements(in *scheduling.Input) {
	held := map[string][]*corev1.Pod{}
	for _, r := range c.replacing {
		if r.done {
			continue
		}
		for claim, pods := range r.holds {
			held[claim] = append(held[claim], pods...)
		}
	}
	for i := range in.Claims {
		if pods := held[in.Claims[i].Claim.Name]; len(pods) > 0 {
			in.Claims[i].Pods = append(append([]*corev1.Pod(nil), in.Claims[i].Pods...), pods...)
		}
	}
}

// replacements names the claims replacing others: they are not idle while the pods of
// the node they replace have yet to come.
func (c *Controller) replacements() map[string]bool {
	out := map[string]bool{}
	for _, r := range c.replacing {
		for _, name := range r.by {
			out[name] = true
		}
	}
	return out
}

// replacementsUnderWay counts the pool's stale claims whose replacements are not ready
// yet: they count against the budget as if they were being disrupted already. The
// replacements of interrupted and unhealthy nodes do not.
func (c *Controller) replacementsUnderWay(pool string) int {
	n := 0
	for _, r := range c.replacing {
		if r.pool == pool && !r.done && budgeted(r.reason) {
			n++
		}
	}
	return n
}

// replaceStale replaces the pool's drifted and expired running nodes as far as the
// budgets allow. A node's pods are simulated on the cluster without it: where they fit on
// nodes that run, the node goes at once; where they need more, the standby claims and
// launches the simulation chose are started, and the node goes once they all run, so
// its pods move straight to ready capacity. When the pool's limits leave no room for a
// replacement first, the node goes first and provisioning replaces it for its pods.
// Nothing is started or launched for a node whose pods their PodDisruptionBudgets do not
// let go now: it could not drain. Expiry in a pool with a terminationGracePeriod is the exception:
// such a pool bounds a node's life, and the drain of an expired node is forced once the
// terminationGracePeriod passes.
func (c *Controller) replaceStale(ctx context.Context, pp *poolPass, stale []candidate) {
	for _, cand := range stale {
		if why := cand.blocked(); why != "" {
			log.FromContext(ctx).V(1).Info("Not replacing a node", "nodeclaim", cand.claim.Name, "reason", cand.stale, "because", why)
			continue
		}
		if err := c.replaceOne(ctx, pp, cand); err != nil {
			log.FromContext(ctx).Error(err, "Replacing a node", "nodeclaim", cand.claim.Name, "reason", cand.stale)
		}
	}
}

func (c *Controller) replaceOne(ctx context.Context, pp *poolPass, cand candidate) error {
	state := staleState(cand.stale)
	forceful := cand.stale == v1beta1.DisruptionExpired && pp.pool.Spec.Template.Spec.TerminationGracePeriod != nil
	decide := func(why string) decision { return decision{reason: cand.stale, forceful: forceful, why: why} }
	if r, ok := c.replacing[cand.claim.Name]; ok {
		if r.done {
			return nil
		}
		ready, lost := c.replacementsReady(ctx, r)
		switch {
		case lost:
			delete(c.replacing, cand.claim.Name) // planned again in the next pass
		case ready:
			done, err := c.act(ctx, pp, cand, decide(fmt.Sprintf("%s and its replacement runs (%s); draining and terminating it", state, strings.Join(r.by, ", "))))
			switch {
			case done == outcomeTerminate:
				r.done = true
				pp.budget.disrupting-- // it counted already, as a replacement under way
			case done == outcomeBlocked:
				c.waitForBudgets(ctx, pp, cand, r)
			}
			return err
		}
		return nil
	}
	if !forceful {
		if blocked := c.evictionsBlocked(pp.pass, cand); blocked != nil {
			c.holdBack(ctx, cand.claim, blocked)
			return nil
		}
		c.release(ctx, cand.claim)
	}
	if pp.budget.left(cand.stale) <= 0 {
		log.FromContext(ctx).V(1).Info("The pool's disruption budget is used up", "nodepool", pp.pool.Name, "reason", cand.stale)
		return nil
	}
	if len(cand.workloads()) == 0 {
		_, err := c.act(ctx, pp, cand, decide(state+" and runs no workload; terminating it"))
		return err
	}
	in, result, limitsOnly, err := c.simulateWithout(ctx, pp.pass, cand)
	if err != nil {
		return err
	}
	switch {
	case limitsOnly:
		_, err := c.act(ctx, pp, cand, decide(state+"; the pool's limits leave no room for a replacement first, so it drains first and its pods get capacity then"))
		return err
	case len(result.Unschedulable) > 0:
		c.event(cand.claim, ReasonDisruptionBlocked, "%s, but pod %s/%s fits on no other node, standby node or new node; keeping it",
			state, result.Unschedulable[0].Pod.Namespace, result.Unschedulable[0].Pod.Name)
		return nil
	case len(result.Starts) == 0 && len(result.Launches) == 0 && len(result.InFlight) == 0:
		_, err := c.act(ctx, pp, cand, decide(state+" and its pods fit on the other nodes; draining and terminating it"))
		return err
	}
	by, holds, err := c.startReplacements(ctx, pp, in, result)
	if len(by) > 0 {
		c.replacing[cand.claim.Name] = &replacement{pool: pp.pool.Name, node: cand.node.Name, reason: cand.stale, by: by, holds: holds}
		pp.budget.take()
		why := fmt.Sprintf("%s; replacing it with %s before it drains", state, strings.Join(by, ", "))
		c.event(cand.claim, string(cand.stale), "%s", why)
		logReplacement(log.FromContext(ctx), pp.pool.Name, cand, cand.stale, by, why)
		metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(cand.stale), string(outcomeReplace)).Inc()
		c.refresh(pp.pass)
	} else if err != nil {
		metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(cand.stale), string(outcomeError)).Inc()
	}
	return err
}

// waitForBudgets keeps a node whose replacements run while a PodDisruptionBudget, which
// changed since the replacement was planned, does not let its pods go; past the bound for
// blocked drains the replacement is given up: the node stops counting against the
// pool's budget, its replacements serve as any node does, and it is planned again once
// its pods may go.
func (c *Controller) waitForBudgets(ctx context.Context, pp *poolPass, cand candidate, r *replacement) {
	if r.blockedSince.IsZero() {
		r.blockedSince = pp.now
	}
	if until := r.blockedSince.Add(c.Options.AbandonDrainAfter); pp.now.Before(until) {
		pp.wakeAt(until)
		return
	}
	delete(c.replacing, cand.claim.Name)
	pp.budget.disrupting--
	log.FromContext(ctx).Info("Giving up a replacement whose node PodDisruptionBudgets keep", "nodepool", pp.pool.Name, "nodeclaim", cand.claim.Name,
		"replacements", r.by, "blockedFor", pp.now.Sub(r.blockedSince).Round(time.Second).String())
}

// startReplacements asks the standby claims the simulation chose to run and creates the
// claims it launches, and names them with the claims in flight it counted on, with the
// pods each will hold. What it wrote is returned even when a later write fails, so that
// the claims started are known to be taken.
func (c *Controller) startReplacements(ctx context.Context, pp *poolPass, in scheduling.Input, result scheduling.Result) ([]string, map[string][]*corev1.Pod, error) {
	claims := map[string]*v1beta1.NodeClaim{}
	for _, sc := range in.Claims {
		claims[sc.Claim.Name] = sc.Claim
	}
	pools := map[string]*v1beta1.NodePool{}
	for _, sp := range in.Pools {
		pools[sp.Pool.Name] = sp.Pool
	}
	var by []string
	holds := map[string][]*corev1.Pod{}
	for pod, claim := range result.InFlight {
		if _, seen := holds[claim]; !seen {
			by = append(by, claim)
		}
		holds[claim] = append(holds[claim], pod)
	}
	for _, s := range result.Starts {
		claim := claims[s.Claim].DeepCopy()
		base := claim.DeepCopy()
		claim.Spec.DesiredState = v1beta1.DesiredRunning
		if err := c.Client.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return by, holds, fmt.Errorf("starting standby claim %s as a replacement: %w", s.Claim, err)
		}
		c.State.ObserveWrite(claim, base.ResourceVersion)
		by, holds[s.Claim] = append(by, s.Claim), s.Pods
	}
	for _, l := range result.Launches {
		claim := schedulinginput.LaunchClaim(pools[l.Pool], l)
		if err := controllerutil.SetControllerReference(pools[l.Pool], claim, c.Client.Scheme()); err != nil {
			return by, holds, err
		}
		if err := c.Client.Create(ctx, claim); err != nil {
			return by, holds, fmt.Errorf("launching a replacement in pool %s: %w", l.Pool, err)
		}
		c.State.ObserveWrite(claim, "")
		by, holds[claim.Name] = append(by, claim.Name), l.Pods
	}
	return by, holds, nil
}

// replacementsReady reports whether every claim replacing a node runs, or whether one
// was lost (deleted, or sent back to standby) so that the replacement must be planned
// again.
func (c *Controller) replacementsReady(ctx context.Context, r *replacement) (ready, lost bool) {
	ready = true
	for _, name := range r.by {
		claim := &v1beta1.NodeClaim{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: name}, claim); err != nil {
			return false, client.IgnoreNotFound(err) == nil
		}
		if !claim.DeletionTimestamp.IsZero() || claim.Spec.DesiredState != v1beta1.DesiredRunning {
			return false, true
		}
		ready = ready && claim.Status.Phase == v1beta1.PhaseRunning
	}
	return ready, false
}

// simulateWithout places the candidate's workloads on the cluster without its node, and
// reports whether they fit only with the pools' limits lifted: they need the room the
// node holds, so it must go before its replacement can come.
func (c *Controller) simulateWithout(ctx context.Context, p *pass, cand candidate) (scheduling.Input, scheduling.Result, bool, error) {
	in, err := c.simulationInput(ctx, p)
	if err != nil {
		return in, scheduling.Result{}, false, err
	}
	in = withoutNode(in, cand.node.Name)
	in.Pods = cand.workloads()
	result := scheduling.Solve(in)
	limitsOnly := len(result.Unschedulable) > 0 && len(scheduling.Solve(withoutLimits(in)).Unschedulable) == 0
	return in, result, limitsOnly, nil
}

// withoutNode is in without the named Node, and without the stale standby claims that
// would make a poor replacement.
func withoutNode(in scheduling.Input, node string) scheduling.Input {
	out := in
	out.Nodes = withoutNodes(in.Nodes, map[string]bool{node: true})
	out.Claims = nil
	for _, cl := range in.Claims {
		if !cl.Standby || cl.Rank < schedulinginput.StaleRank {
			out.Claims = append(out.Claims, cl)
		}
	}
	return out
}

// withoutLimits is in with every pool's limits lifted: what fits then but not before
// needs the room the stale node holds.
func withoutLimits(in scheduling.Input) scheduling.Input {
	out := in
	out.Pools = make([]scheduling.Pool, len(in.Pools))
	for i, p := range in.Pools {
		p.NodesLeft, p.Left = -1, nil
		out.Pools[i] = p
	}
	return out
}

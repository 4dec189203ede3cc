package disruption

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/pdbs"
	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/internal/state"
)

// consolidate gives back the pool's busy nodes whose workload would fit on the
// cluster's other running nodes, simulated with kube-scheduler's predicates on the
// current state with those nodes removed. It first looks for the most nodes that can go
// together (their pods fitting on fewer), cheapest to disrupt first, then for any single
// one. The choice is made over every busy node, settled or not, and carried out once
// every node chosen has settled: which node goes is a matter of the cluster's state, not
// of which node happened to settle first. (A node that started a moment after the
// others, with a small pod, is the one to give back, not a busy node whose pod would
// fit on it.) Only nodes that exist and stay count as room: giving nodes back never starts
// or launches a node, so it cannot cause the start/stop churn it exists to avoid (a
// replacement with a cheaper node is cheaper.go's, for a saving worth it); nodes
// being given back or replaced are no room. The pods waiting now and those on nodes
// going away are placed in the same simulation, so a node they need is never freed. A
// pool waits while pods it would serve are pending: its nodes may be what they wait for.
func (c *Controller) consolidate(ctx context.Context, pp *poolPass, busy []candidate) error {
	if len(busy) == 0 {
		return nil
	}
	in, err := c.simulationInput(ctx, pp.pass)
	if err != nil {
		return err
	}
	if waiting := c.podsWaitingFor(pp, in); waiting > 0 {
		log.FromContext(ctx).V(1).Info("Not consolidating while pods of the pool are pending", "nodepool", pp.pool.Name, "pods", waiting)
		return nil
	}
	needing := pp.needingRoom()
	var movable []candidate
	var guarded []heldBack
	for _, cand := range busy {
		why := cand.blocked()
		if why == "" {
			why = cand.unmovable()
		}
		if why == "" && neededBy(in, cand, needing) {
			why = "pods waiting for room would be placed on it"
		}
		if why != "" {
			log.FromContext(ctx).V(1).Info("Not consolidating a node", "nodeclaim", cand.claim.Name, "because", why)
			continue
		}
		if blocked := c.evictionsBlocked(pp.pass, cand); blocked != nil {
			guarded = append(guarded, heldBack{cand, blocked})
			continue
		}
		movable = append(movable, cand)
	}
	r := newRoom(in, needing)
	c.reportGuarded(ctx, r, guarded, movable)
	allowed := min(len(movable), pp.budget.left(v1beta1.DisruptionUnderutilized), pp.idleMayGo())
	if allowed <= 0 {
		return nil
	}
	c.cheapestToDisruptFirst(movable)
	// The nodes of one decision go together: their pods fit on the others, and their
	// PodDisruptionBudgets let all of them go at once.
	// The buffers' room is kept as the waiting pods' is: the active capacity buffers'
	// virtual pods fit on what stays as they fit now (buffers.go).
	keepsBuffers := func(set []candidate) bool {
		kept, err := c.keepsBufferRoom(ctx, pp.pass, set)
		return err == nil && kept
	}
	chosen := largest(movable[:allowed], func(set []candidate) bool {
		return r.fitsElsewhere(set) && c.evictionsBlocked(pp.pass, set...) == nil && keepsBuffers(set)
	})
	if len(chosen) == 0 {
		for _, cand := range movable {
			if r.fitsElsewhere([]candidate{cand}) && keepsBuffers([]candidate{cand}) {
				chosen = []candidate{cand}
				break
			}
		}
	}
	for _, cand := range chosen {
		if !cand.settled {
			log.FromContext(ctx).V(1).Info("Consolidation waits for the node it chose to settle", "nodepool", pp.pool.Name, "nodeclaim", cand.claim.Name)
			return nil // the pass wakes when it settles
		}
	}
	for _, cand := range chosen {
		d := decision{reason: v1beta1.DisruptionUnderutilized, giveBack: pp.giveBack(cand)}
		what := fmt.Sprintf("Its %d pods fit on the other nodes", len(cand.workloads()))
		if others := len(chosen) - 1; others == 1 {
			what += ", consolidated with 1 other node"
		} else if others > 1 {
			what += fmt.Sprintf(", consolidated with %d other nodes", others)
		}
		d.why = what + "; terminating it"
		if d.giveBack {
			d.why = what + "; giving it back to the warm pool"
		}
		if _, err := c.act(ctx, pp, cand, d); err != nil {
			return err
		}
	}
	return nil
}

// heldBack is a candidate whose pods a PodDisruptionBudget does not let go now.
type heldBack struct {
	cand    candidate
	blocked *pdbs.Blocked
}

// reportGuarded says on each settled node that consolidation would give back alone but
// for a PodDisruptionBudget which budget keeps it, and clears that once no budget
// does. A node that is busy still, or whose pods would not fit elsewhere anyway, is not
// held back by a budget, and is not told so.
func (c *Controller) reportGuarded(ctx context.Context, r room, guarded []heldBack, movable []candidate) {
	for _, g := range guarded {
		if !g.cand.settled {
			continue
		}
		if r.fitsElsewhere([]candidate{g.cand}) {
			c.holdBack(ctx, g.cand.claim, g.blocked)
		} else {
			c.release(ctx, g.cand.claim)
		}
	}
	for _, cand := range movable {
		c.release(ctx, cand.claim)
	}
}

// podsWaitingFor counts the pods pending for the pool: nominated to one of its claims and
// not bound yet, waiting for capacity that the pool's nodes, claims or template would
// give them, or bound to one of its nodes within consolidateAfter and not running yet (a
// pod that does not start for longer, an image that cannot be pulled say, does not hold
// the pool back).
func (c *Controller) podsWaitingFor(pp *poolPass, in scheduling.Input) int {
	waiting := 0
	ours := map[string]bool{}
	for _, claim := range pp.claimsOf(pp.pool.Name) {
		ours[claim.Name] = true
	}
	own := in
	own.Pods, own.Nodes, own.Claims, own.Pools = pp.snap.Pending, nil, nil, nil
	for _, cs := range pp.snap.Claims {
		if ours[cs.Claim.Name] {
			waiting += len(cs.Nominated)
		}
	}
	for _, n := range in.Nodes {
		if n.Node.Labels[v1beta1.LabelNodePool] != pp.pool.Name {
			continue
		}
		own.Nodes = append(own.Nodes, n)
		for _, pod := range n.Pods {
			if pod.Spec.NodeName == "" || startingSince(pod, pp.now.Add(-pp.consolidateAfter)) {
				waiting++ // nominated to the node's claim and not bound yet, or starting
			}
		}
	}
	if len(pp.snap.Pending) == 0 {
		return waiting
	}
	for _, cl := range in.Claims {
		if ours[cl.Claim.Name] {
			own.Claims = append(own.Claims, cl)
		}
	}
	for _, sp := range in.Pools {
		if sp.Pool.Name == pp.pool.Name {
			own.Pools = append(own.Pools, sp)
		}
	}
	r := scheduling.Solve(own)
	waiting += len(r.Existing) + len(r.InFlight)
	for _, s := range r.Starts {
		waiting += len(s.Pods)
	}
	for _, l := range r.Launches {
		waiting += len(l.Pods)
	}
	return waiting
}

// startingSince reports whether a pod was bound after t and does not run yet.
func startingSince(pod *corev1.Pod, t time.Time) bool {
	if pod.Status.Phase != corev1.PodPending {
		return false
	}
	scheduled := podutil.Condition(pod, corev1.PodScheduled)
	return scheduled != nil && scheduled.Status == corev1.ConditionTrue && scheduled.LastTransitionTime.After(t)
}

// cheapestToDisruptFirst orders candidates by the pods a disruption moves, then by the
// CPU they request, then by how long their workload has not changed.
func (c *Controller) cheapestToDisruptFirst(cands []candidate) {
	c.longestSettledFirst(cands)
	sort.SliceStable(cands, func(a, b int) bool {
		x, y := cands[a].workloads(), cands[b].workloads()
		if len(x) != len(y) {
			return len(x) < len(y)
		}
		return requestedCPU(x) < requestedCPU(y)
	})
}

func requestedCPU(pods []*corev1.Pod) int64 {
	var total int64
	for _, pod := range pods {
		requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		total += requests.Cpu().MilliValue()
	}
	return total
}

// room is the simulation consolidation runs: the cluster's running nodes and the pods
// waiting now, with how many of those the nodes can take as they are.
type room struct {
	in      scheduling.Input
	pending []*corev1.Pod
	// placed is how many waiting pods fit on the running nodes now; taking nodes away
	// must not lower it.
	placed int
}

// newRoom is the room on the cluster's running nodes but the empty ones of Stratos:
// those go back themselves once their consolidateAfter ends, and moving pods onto them
// would only trade one node for another. Claims coming and the pools' templates are no
// room and are left out of its simulations; the input's other fields carry over.
func newRoom(in scheduling.Input, pending []*corev1.Pod) room {
	r := room{in: in, pending: pending}
	r.in.Pods, r.in.Nodes, r.in.Claims, r.in.Pools = nil, nil, nil, nil
	for _, n := range in.Nodes {
		if _, ours := n.Node.Labels[v1beta1.LabelNodePool]; !ours || slices.ContainsFunc(n.Pods, state.Workload) {
			r.in.Nodes = append(r.in.Nodes, n)
		}
	}
	if len(pending) > 0 {
		now := r.in
		now.Pods, now.Nodes = pending, in.Nodes
		r.placed = len(scheduling.Solve(now).Existing)
	}
	return r
}

// largest returns the longest prefix of cands for which ok holds, found by binary
// search: ok must hold for every prefix up to the longest one. Taking more nodes away
// leaves less room and evicts more pods, so fitting elsewhere and being let go by the
// PodDisruptionBudgets both do.
func largest(cands []candidate, ok func([]candidate) bool) []candidate {
	lo, hi := 0, len(cands)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ok(cands[:mid]) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return cands[:lo]
}

// fitsElsewhere reports whether the workload pods of every candidate in set fit on the
// running nodes that are not in set, and leave the pods waiting now as much room as
// they have.
func (r room) fitsElsewhere(set []candidate) bool {
	gone := map[string]bool{}
	var moving []*corev1.Pod
	for _, cand := range set {
		gone[cand.node.Name] = true
		moving = append(moving, cand.workloads()...)
	}
	sim := r.in
	sim.Pods, sim.Nodes = append(append([]*corev1.Pod(nil), moving...), r.pending...), nil
	for _, n := range r.in.Nodes {
		if !gone[n.Node.Name] {
			sim.Nodes = append(sim.Nodes, n)
		}
	}
	result := scheduling.Solve(sim)
	for _, pod := range moving {
		if _, ok := result.Existing[pod]; !ok {
			return false
		}
	}
	return len(result.Existing)-len(moving) >= r.placed
}

package disruption

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/nodeclass"
	"github.com/stratos-sh/stratos/internal/pdbs"
	"github.com/stratos-sh/stratos/internal/recovery"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/internal/schedulinginput"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/internal/windows"
)

// defaultConsolidateAfter applies when a pool sets none (the API server defaults it too).
const defaultConsolidateAfter = 30 * time.Second

// pass is what one pass over the pools shares: the moment, the cluster's picture, and
// the simulation's input, built when first needed. Every decision that writes takes the
// picture anew (the state shows this process's writes at once), so that each decision
// sees the ones before it: a node given back is no room, its pods need room, a claim
// started or launched for a replacement is taken.
type pass struct {
	now   time.Time
	snap  state.Snapshot
	input *scheduling.Input
	// pdbCache is the picture's PodDisruptionBudgets, read when first needed.
	pdbCache *pdbs.Set
	// next is when the pass after should run at the latest: a candidate's wait ends, or
	// a node expires. Zero: at the next poll.
	next time.Time
	// buffers are the active-capacity CapacityBuffers' virtual pods, whose room on
	// running nodes giving nodes back keeps (buffers.go).
	buffers []*corev1.Pod
}

// wakeAt makes the next pass run by t.
func (p *pass) wakeAt(t time.Time) {
	if !t.IsZero() && (p.next.IsZero() || t.Before(p.next)) {
		p.next = t
	}
}

// needingRoom are the pods that need room on the nodes that stay: those waiting for
// capacity now, and those on nodes going away.
func (p *pass) needingRoom() []*corev1.Pod {
	return append(append([]*corev1.Pod(nil), p.snap.Pending...), p.snap.Leaving...)
}

// refresh takes the cluster's picture anew after a decision wrote.
func (c *Controller) refresh(p *pass) {
	p.snap, p.input, p.pdbCache = c.State.Snapshot(), nil, nil
}

// pdbSet is the PodDisruptionBudgets of the pass's picture.
func (p *pass) pdbSet() pdbs.Set {
	if p.pdbCache == nil {
		set := pdbs.NewSet(p.snap.PDBs)
		p.pdbCache = &set
	}
	return *p.pdbCache
}

// simulationInput is the cluster as the scheduling simulation sees it now. Nodes being
// replaced are going and offer no room; their pods are on the claims replacing them.
func (c *Controller) simulationInput(ctx context.Context, p *pass) (scheduling.Input, error) {
	if p.input == nil {
		in, err := schedulinginput.Builder{Client: c.Client, Cloud: c.Cloud, Clock: c.Clock, Calendar: c.Calendar}.Input(ctx, p.snap, nil)
		if err != nil {
			return in, err
		}
		in.Nodes = withoutNodes(in.Nodes, c.replacedNodes())
		c.holdReplacements(&in)
		p.input = &in
	}
	return *p.input, nil
}

// withoutNodes is nodes without the named ones.
func withoutNodes(nodes []scheduling.Node, names map[string]bool) []scheduling.Node {
	out := make([]scheduling.Node, 0, len(nodes))
	for _, n := range nodes {
		if !names[n.Node.Name] {
			out = append(out, n)
		}
	}
	return out
}

// Pass looks at every pool once, gives back, terminates or replaces the nodes whose time
// came, and returns when the next candidate's wait ends (zero when none waits). A panic
// of the pass is recovered, logged with the input's size and counted.
func (c *Controller) Pass(ctx context.Context) (next time.Time, err error) {
	started := time.Now()
	defer func() { metrics.DisruptionDuration.Observe(time.Since(started).Seconds()) }()
	var size recovery.Size
	defer recovery.Recover(ctx, "disruption", &size, &err)
	if !c.State.HasSynced() {
		log.FromContext(ctx).V(1).Info("The cluster state has not synced yet; deciding nothing")
		return time.Time{}, nil
	}
	if c.settle == nil {
		c.Options = c.Options.WithDefaults()
		c.settle, c.replacing, c.blockedDrains, c.repairsHeld = settling{}, map[string]*replacement{}, map[string]time.Time{}, map[string]string{}
	}
	pools := &v1beta1.NodePoolList{}
	if err := c.Client.List(ctx, pools); err != nil {
		return time.Time{}, err
	}
	p := &pass{now: c.Clock.Now(), snap: c.State.Snapshot()}
	if p.buffers, err = activeBufferPods(ctx, c.Client); err != nil {
		return time.Time{}, err
	}
	size = recovery.Size{"pools", len(pools.Items), "claims", len(p.snap.All), "nodes", len(p.snap.Nodes), "pending", len(p.snap.Pending)}
	live := map[string]bool{}
	for _, claim := range p.snap.All {
		live[claim.Name] = true
	}
	var errs []error
	for i := range pools.Items {
		pool := &pools.Items[i]
		if !pool.DeletionTimestamp.IsZero() {
			continue
		}
		errs = append(errs, c.passPool(ctx, p, pool))
	}
	c.settle.forgetAllBut(live)
	for name := range c.replacing {
		if !live[name] {
			delete(c.replacing, name)
		}
	}
	for name := range c.blockedDrains {
		if !live[name] {
			delete(c.blockedDrains, name)
		}
	}
	return p.next, errors.Join(errs...)
}

// poolPass is one pool's part of a pass.
type poolPass struct {
	*pass
	pool   *v1beta1.NodePool
	budget *budget
	// standby counts the claims asked to stand by, and ceiling is how many the pool keeps.
	standby, ceiling int
	// standbyIn counts the claims asked to stand by, by zone.
	standbyIn map[string]int
	// running counts the claims asked to run; the active window keeps minRunning of them.
	running, minRunning int
	// overCap is set while the pool has more claims than its cap on nodes allows (a
	// window may lower it, to 0 at night): nodes given back are terminated then.
	overCap bool
	// consolidateAfter is how long a node's workload must stay the same before it goes.
	consolidateAfter time.Duration
}

// giveBack reports whether a node of the pool that is not stale goes back to standby
// rather than away: while the warm pool is below its ceiling and the pool within its cap,
// and only an instance that can stop and start again (on-demand): a spot node stopped
// would not be the warm pool's insurance, and EC2 does not stop one-time spot instances.
func (pp *poolPass) giveBack(cand candidate) bool {
	return cand.stale == "" && pp.standby < pp.ceiling && !pp.overCap && cloudprovider.CanStandBy(cand.claim.Status.CapacityType)
}

// nextToGiveBack returns the index of the candidate to give back next: the first (in
// their order) of those whose zone has the fewest standby nodes, so that nodes given back
// keep the warm pool balanced across zones (the others go away once it is full).
func (pp *poolPass) nextToGiveBack(cands []candidate) int {
	best := 0
	for i, cand := range cands {
		if pp.standbyIn[cand.claim.Status.Zone] < pp.standbyIn[cands[best].claim.Status.Zone] {
			best = i
		}
	}
	return best
}

// idleMayGo is how many more running nodes may be given back or removed as idle
// (empty or under-used) without going below the active window's running minimum.
func (pp *poolPass) idleMayGo() int { return pp.running - pp.minRunning }

// claimsOf are the pool's claims in the pass's picture, those being deleted included.
func (p *pass) claimsOf(pool string) []*v1beta1.NodeClaim {
	var out []*v1beta1.NodeClaim
	for _, claim := range p.snap.All {
		if claim.Spec.NodePool == pool {
			out = append(out, claim)
		}
	}
	return out
}

// passPool handles one pool: stale nodes are replaced, then empty nodes, then (under
// WhenEmptyOrUnderutilized) nodes whose pods fit elsewhere, are given back, each once its
// workload has not changed for consolidateAfter, as far as the budgets allow.
func (c *Controller) passPool(ctx context.Context, p *pass, pool *v1beta1.NodePool) error {
	if pool.Spec.Paused || pool.Spec.KillSwitch {
		return nil // paused: nothing changes; kill switch: the pool controller removes all
	}
	targets, err := windows.For(pool, windows.Calendar(c.Calendar, c.Clock).Now())
	if err != nil {
		log.FromContext(ctx).V(1).Info("The pool's windows cannot be read; its spec's targets hold", "nodepool", pool.Name, "error", err.Error())
	}
	targets = withPoolStatus(targets, pool)
	current, canStandBy, err := c.current(ctx, pool)
	if err != nil {
		return err
	}
	if !canStandBy {
		// Its nodes cannot stand by: an empty node goes rather than back to a warm pool
		// the pool cannot keep (the nodepool controller says so on the pool).
		targets.MinStandby, targets.MaxStandby = 0, 0
	}
	claims := p.claimsOf(pool.Name)
	n := census(pool, claims)
	pp := &poolPass{pass: p, pool: pool, standby: n.standby, standbyIn: n.standbyIn, ceiling: int(targets.MaxStandby), running: n.running, minRunning: int(targets.MinRunning),
		overCap: targets.MaxNodes != nil && n.live > int(*targets.MaxNodes),
		budget:  &budget{budgets: pool.Spec.Disruption.Budgets, total: n.total, disrupting: n.disrupting + c.replacementsUnderWay(pool.Name), now: p.now}}

	after := defaultConsolidateAfter
	if pool.Spec.Disruption.ConsolidateAfter != nil {
		after = pool.Spec.Disruption.ConsolidateAfter.Duration
	}
	pp.consolidateAfter = after
	protected := c.replacements()
	cands, err := c.disruptInvoluntarily(ctx, pp, claims, candidates(p.snap, pool, claims, current, p.now))
	var stale, empty, busy, swapping []candidate
	for _, cand := range cands {
		if expires := claimtemplate.ExpiresAt(pool, cand.claim); expires.After(p.now) {
			p.wakeAt(expires)
		}
		if protected[cand.claim.Name] || cand.awaited > 0 {
			// Pods are on their way to the node: a replacement waits for the pods of the
			// node it replaces, a node provisioning chose waits for its pods to bind.
			delete(c.settle, cand.claim.Name)
			continue
		}
		if c.replacingWithCheaper(cand.claim.Name) {
			swapping = append(swapping, cand) // its cheaper replacement is under way (cheaper.go)
			continue
		}
		since := c.settle.observe(cand, p.now)
		cand.settled = !p.now.Before(since.Add(after))
		if !cand.settled {
			p.wakeAt(since.Add(after))
		}
		// A stale node is replaced; once it has been empty for consolidateAfter it may
		// also go as an empty one, within the budget for Empty.
		switch {
		case cand.stale != "" && !(cand.settled && cand.empty()):
			stale = append(stale, cand)
		case cand.empty() && cand.settled:
			empty = append(empty, cand)
		case !cand.empty():
			// Consolidation weighs busy nodes whether or not they have settled, and acts
			// once its choice has: see consolidate.
			busy = append(busy, cand)
		}
	}
	err = errors.Join(err, c.abandonBlockedDrains(ctx, pp, claims))
	c.replaceStale(ctx, pp, stale)
	err = errors.Join(err, c.giveBackEmpty(ctx, pp, empty))
	if pool.Spec.Disruption.ConsolidationPolicy == v1beta1.ConsolidationWhenEmptyOrUnderutilized {
		err = errors.Join(err, c.consolidate(ctx, pp, busy))
	}
	err = errors.Join(err, c.replaceWithCheaper(ctx, pp, swapping, busy))
	if pp.budget.err != nil {
		c.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, ReasonInvalidBudget, "Disrupt", "No node is disrupted while a budget cannot be read: %v", pp.budget.err)
	}
	return err
}

// current is what the pool's nodes should be made of now, or nothing while its node
// class is missing (nothing counts as drifted then), and whether the class's nodes can
// stand by (nodeclass.CanStandBy).
func (c *Controller) current(ctx context.Context, pool *v1beta1.NodePool) (claimtemplate.Current, bool, error) {
	class, err := nodeclass.Get(ctx, c.Client, pool.Spec.Template.Spec.NodeClassRef)
	if apierrors.IsNotFound(err) {
		return claimtemplate.Current{}, true, nil
	}
	if err != nil {
		return claimtemplate.Current{}, true, err
	}
	canStandBy, _, _ := nodeclass.CanStandBy(class)
	current, err := claimtemplate.CurrentOf(pool, class)
	return current, canStandBy, err
}

// counts are what a pool's claims add up to for disruption.
type counts struct {
	// total run or are being disrupted (what budget percentages are of); disrupting
	// are being disrupted now (draining to stand by, or terminating while asked to run).
	total, disrupting int
	// live are not being deleted; of those, standby are asked to stand by and running
	// to run.
	live, standby, running int
	// standbyIn counts the claims asked to stand by, by the zone of their instance.
	standbyIn map[string]int
}

// census counts a pool's claims. A claim asked to be terminated counts as going, as a
// deleted one does. An interrupted or unhealthy node goes whatever the budgets say, so
// its going takes none of them.
func census(pool *v1beta1.NodePool, claims []*v1beta1.NodeClaim) counts {
	n := counts{standbyIn: map[string]int{}}
	for _, claim := range claims {
		desired := claim.Spec.DesiredState
		deleting := !claim.DeletionTimestamp.IsZero()
		asked := claim.Status.Phase == v1beta1.PhaseRunning && (desired == v1beta1.DesiredStandby || desired == v1beta1.DesiredTerminated)
		switch {
		case involuntaryReason(pool, claim) != "" && (claim.Status.Phase == v1beta1.PhaseRunning || claim.Status.Phase == v1beta1.PhaseDraining):
			n.total++
		case claim.Status.Phase == v1beta1.PhaseDraining, asked,
			deleting && desired != v1beta1.DesiredStandby && claim.Status.NodeName != "":
			n.total++
			n.disrupting++
		case claim.Status.Phase == v1beta1.PhaseRunning:
			n.total++
		}
		if deleting || desired == v1beta1.DesiredTerminated {
			continue
		}
		n.live++
		switch claim.Spec.DesiredState {
		case v1beta1.DesiredStandby:
			n.standby++
			n.standbyIn[claim.Status.Zone]++
		case v1beta1.DesiredRunning:
			n.running++
		}
	}
	return n
}

// neededBy reports whether pods that need room would be placed on the candidate's
// Node, as the simulation's input in shows it (taints that lag behind the Node's
// readiness left out): freeing it would only make provisioning start another. The
// input's fields but its pods, nodes, claims and pools carry over.
func neededBy(in scheduling.Input, cand candidate, needing []*corev1.Pod) bool {
	if len(needing) == 0 {
		return false
	}
	sim := in
	sim.Pods, sim.Nodes, sim.Claims, sim.Pools = needing, nil, nil, nil
	for _, n := range in.Nodes {
		if n.Node.Name == cand.node.Name {
			sim.Nodes = append(sim.Nodes, n)
		}
	}
	return len(sim.Nodes) > 0 && len(scheduling.Solve(sim).Existing) > 0
}

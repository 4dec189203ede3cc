package disruption

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// replaceInvoluntarily replaces a node that goes whatever the pool's budgets say, for
// reason Interrupted or Unhealthy, as a stale node is replaced — the standby claims and
// launches the simulation chose are started first, and the node drains once they run —
// but with none of what keeps a voluntary disruption back: budgets neither apply nor
// count it, PodDisruptionBudgets are not asked beforehand (the drain honours them as far
// as the deadline lets it), do-not-disrupt does not hold it, and the node's workload
// need not have settled. An interrupted node is asked to go at the latest at drainBy,
// even while its replacements are coming, so that its pods leave before the instance
// dies. It goes at once when its pods fit on the nodes there are, when it has none, or
// when the pool's limits leave no room for a replacement first (provisioning then gives
// its pods capacity); and when its pods fit nowhere at all, since it goes anyway.
// involuntaryRecheck is how soon a pass looks again at an involuntary replacement under
// way, to drain the node as soon as its replacements run.
const involuntaryRecheck = time.Second

func (c *Controller) replaceInvoluntarily(ctx context.Context, pp *poolPass, cand candidate, reason v1beta1.DisruptionReason) error {
	state := involuntaryState(cand.claim, reason)
	decide := func(why string) decision {
		return decision{reason: reason, forceful: true, involuntary: true, why: why}
	}
	deadline, hasDeadline := drainBy(cand.claim)
	late := hasDeadline && !pp.now.Before(deadline)
	if hasDeadline && !late {
		pp.wakeAt(deadline)
	}
	if r, ok := c.replacing[cand.claim.Name]; ok {
		if r.done {
			return nil
		}
		// A rebalance or cheaper replacement that an interruption overtook: the node now
		// goes for good once its replacements run.
		r.reason, r.cheaper = reason, false
		ready, lost := c.replacementsReady(ctx, r)
		switch {
		case ready:
			return c.actInvoluntarily(ctx, pp, cand, r, decide(fmt.Sprintf("%s and its replacement runs (%s); draining and terminating it", state, strings.Join(r.by, ", "))))
		case late:
			return c.actInvoluntarily(ctx, pp, cand, r, decide(fmt.Sprintf("%s; its replacement (%s) does not run yet, and the drain cannot wait longer", state, strings.Join(r.by, ", "))))
		case !lost:
			// Look again soon rather than at the next poll: every second the node keeps
			// its pods after its replacements run is a second of the notice gone.
			pp.wakeAt(pp.now.Add(involuntaryRecheck))
			return nil
		}
		delete(c.replacing, cand.claim.Name) // planned again now
	}
	if late {
		return c.actInvoluntarily(ctx, pp, cand, nil, decide(state+"; the notice leaves no time for a replacement first, so it drains now"))
	}
	if len(cand.workloads()) == 0 {
		return c.actInvoluntarily(ctx, pp, cand, nil, decide(state+" and runs no workload; terminating it"))
	}
	in, result, limitsOnly, err := c.simulateWithout(ctx, pp.pass, cand)
	if err != nil {
		return err
	}
	switch {
	case limitsOnly:
		return c.actInvoluntarily(ctx, pp, cand, nil, decide(state+"; the pool's limits leave no room for a replacement first, so it drains now and its pods get capacity then"))
	case len(result.Unschedulable) > 0:
		p := result.Unschedulable[0].Pod
		return c.actInvoluntarily(ctx, pp, cand, nil, decide(fmt.Sprintf("%s; pod %s/%s fits on no other node, standby node or new node, and the node goes anyway; draining it", state, p.Namespace, p.Name)))
	case len(result.Starts) == 0 && len(result.Launches) == 0 && len(result.InFlight) == 0:
		return c.actInvoluntarily(ctx, pp, cand, nil, decide(state+" and its pods fit on the other nodes; draining and terminating it"))
	}
	by, holds, err := c.startReplacements(ctx, pp, in, result)
	if len(by) == 0 {
		if err != nil {
			metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(reason), string(outcomeError)).Inc()
		}
		return err
	}
	c.replacing[cand.claim.Name] = &replacement{pool: pp.pool.Name, node: cand.node.Name, reason: reason, by: by, holds: holds}
	pp.wakeAt(pp.now.Add(involuntaryRecheck))
	why := fmt.Sprintf("%s; replacing it with %s before it drains", state, strings.Join(by, ", "))
	c.event(cand.claim, string(reason), "%s", why)
	logReplacement(log.FromContext(ctx), pp.pool.Name, cand, reason, by, why)
	metrics.DisruptionDecisions.WithLabelValues(pp.pool.Name, string(reason), string(outcomeReplace)).Inc()
	c.refresh(pp.pass)
	return err
}

// actInvoluntarily asks the node to be terminated; once it is, its replacement r (nil
// when none was needed) is done, and an unhealthy node counts as repaired.
func (c *Controller) actInvoluntarily(ctx context.Context, pp *poolPass, cand candidate, r *replacement, d decision) error {
	done, err := c.act(ctx, pp, cand, d)
	if done != outcomeTerminate {
		return err
	}
	if r != nil {
		r.done = true
	}
	if d.reason == v1beta1.DisruptionUnhealthy {
		metrics.NodeRepairs.WithLabelValues(pp.pool.Name, unhealthyReason(cand.claim)).Inc()
	}
	return err
}

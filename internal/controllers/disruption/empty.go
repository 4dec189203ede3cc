package disruption

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// giveBackEmpty gives back the pool's nodes that have run no workload for
// consolidateAfter, the longest empty first among those of the zone with the fewest
// standby nodes, as far as the budget allows: to standby while the warm pool is below
// its ceiling, else away.
func (c *Controller) giveBackEmpty(ctx context.Context, pp *poolPass, empty []candidate) error {
	empty = slices.Clone(empty)
	c.longestSettledFirst(empty)
	for len(empty) > 0 {
		next := pp.nextToGiveBack(empty)
		cand := empty[next]
		empty = slices.Delete(empty, next, next+1)
		if why := cand.blocked(); why != "" {
			log.FromContext(ctx).V(1).Info("Not disrupting an empty node", "nodeclaim", cand.claim.Name, "because", why)
			continue
		}
		if needing := pp.needingRoom(); len(needing) > 0 {
			in, err := c.simulationInput(ctx, pp.pass)
			if err != nil {
				return err
			}
			if neededBy(in, cand, needing) {
				log.FromContext(ctx).V(1).Info("Not disrupting an empty node that waiting pods need", "nodeclaim", cand.claim.Name)
				continue
			}
		}
		if kept, err := c.keepsBufferRoom(ctx, pp.pass, []candidate{cand}); err != nil || !kept {
			if err != nil {
				return err
			}
			log.FromContext(ctx).V(1).Info("Not disrupting an empty node that keeps capacity buffers' room", "nodeclaim", cand.claim.Name)
			continue
		}
		if pp.idleMayGo() <= 0 {
			log.FromContext(ctx).V(1).Info("The active window keeps the pool's running nodes", "nodepool", pp.pool.Name, "minRunning", pp.minRunning)
			return nil
		}
		if pp.budget.left(v1beta1.DisruptionEmpty) <= 0 {
			log.FromContext(ctx).V(1).Info("The pool's disruption budget is used up", "nodepool", pp.pool.Name, "reason", v1beta1.DisruptionEmpty)
			return nil
		}
		emptyFor := pp.now.Sub(c.settle[cand.claim.Name].since).Round(time.Second)
		d := decision{reason: v1beta1.DisruptionEmpty, giveBack: pp.giveBack(cand)}
		switch {
		case d.giveBack:
			d.why = fmt.Sprintf("Node empty for %s; giving it back to the warm pool", emptyFor)
		case cand.stale != "":
			d.why = fmt.Sprintf("Node empty for %s and %s; terminating it", emptyFor, strings.ToLower(string(cand.stale)))
		default:
			d.why = fmt.Sprintf("Node empty for %s and the warm pool is full; terminating it", emptyFor)
		}
		// An empty node evicts no pod, so no PodDisruptionBudget holds it: one that held it
		// while it ran pods no longer does.
		c.release(ctx, cand.claim)
		if _, err := c.act(ctx, pp, cand, d); err != nil {
			return err
		}
	}
	return nil
}

// longestSettledFirst orders candidates by how long their workload has not changed.
func (c *Controller) longestSettledFirst(cands []candidate) {
	sort.SliceStable(cands, func(a, b int) bool {
		return c.settle[cands[a].claim.Name].since.Before(c.settle[cands[b].claim.Name].since)
	})
}

package disruption

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// ReasonRepairsHeld: more than half of a pool's nodes are unhealthy, and none is
// repaired — that is an outage to report, not nodes to replace.
const ReasonRepairsHeld = "RepairsHeld"

// repairsAllowed is how many more of a pool's unhealthy nodes may be repaired now: at
// most 20% of the pool's nodes (at least one) at once, counting the repairs under way,
// and none while more than half of them are unhealthy.
//
// TODO(issue 30): switch to i30-repair's pure repair-limits package if it lands one; this
// is the hook disruption calls.
func repairsAllowed(poolNodes, unhealthy, underway int) int {
	if unhealthy*2 > poolNodes {
		return 0
	}
	return max(0, max(1, poolNodes/5)-underway)
}

// repairsLeft counts the pool's nodes — the claims whose Node serves or served pods:
// running, draining, or being terminated — those of them that are unhealthy, and the
// repairs under way (unhealthy claims being replaced, draining or going), and returns
// how many more may start. When more than half are unhealthy it says so on the pool,
// once until the count changes.
func (c *Controller) repairsLeft(ctx context.Context, pp *poolPass, claims []*v1beta1.NodeClaim) int {
	nodes, unhealthy, underway := 0, 0, 0
	for _, claim := range claims {
		switch claim.Status.Phase {
		case v1beta1.PhaseRunning, v1beta1.PhaseDraining, v1beta1.PhaseTerminating:
		default:
			continue
		}
		if claim.Status.NodeName == "" {
			continue
		}
		nodes++
		if !meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionUnhealthy) {
			continue
		}
		unhealthy++
		_, replacing := c.replacing[claim.Name]
		if replacing || claim.Spec.DesiredState != v1beta1.DesiredRunning || !claim.DeletionTimestamp.IsZero() || claim.Status.Phase != v1beta1.PhaseRunning {
			underway++
		}
	}
	left := repairsAllowed(nodes, unhealthy, underway)
	note := ""
	if unhealthy*2 > nodes {
		note = fmt.Sprintf("%d of the pool's %d nodes are unhealthy: more than half, which is an outage to look into rather than nodes to replace; repairing none", unhealthy, nodes)
	}
	if c.repairsHeld[pp.pool.Name] != note {
		if note != "" {
			log.FromContext(ctx).Info("Not repairing nodes: more than half of the pool's nodes are unhealthy", "nodepool", pp.pool.Name, "unhealthy", unhealthy, "nodes", nodes)
			c.Recorder.Eventf(pp.pool, nil, corev1.EventTypeWarning, ReasonRepairsHeld, "Repair", "%s", note)
		}
		c.repairsHeld[pp.pool.Name] = note
	}
	return left
}

// unhealthySince is when the claim's Unhealthy condition last turned True.
func unhealthySince(claim *v1beta1.NodeClaim) time.Time {
	if c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionUnhealthy); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// unhealthyReason is the reason of the claim's Unhealthy condition: NotReady, or the
// type of the node condition that made it unhealthy.
func unhealthyReason(claim *v1beta1.NodeClaim) string {
	if c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionUnhealthy); c != nil && c.Reason != "" {
		return c.Reason
	}
	return "Unknown"
}

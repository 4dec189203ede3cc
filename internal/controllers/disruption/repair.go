package disruption

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/repair"
)

// ReasonRepairsHeld: more than half of a pool's nodes are unhealthy, and none is
// repaired — that is an outage to report, not nodes to replace.
const ReasonRepairsHeld = "RepairsHeld"

// repairsLeft counts the pool's nodes and those of them that are unhealthy as the
// pool's status does (repair.Judged: running or draining, not being deleted), and the
// repairs under way (unhealthy claims being replaced, draining or going), and returns
// how many more may start (repair.Allowed). When more than half are unhealthy it says
// so on the pool, once until the count changes.
func (c *Controller) repairsLeft(ctx context.Context, pp *poolPass, claims []*v1beta1.NodeClaim) int {
	nodes, unhealthy, underway := 0, 0, 0
	for _, claim := range claims {
		if !meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionUnhealthy) {
			if repair.Judged(claim.Status.Phase) && claim.DeletionTimestamp.IsZero() {
				nodes++
			}
			continue
		}
		_, replacing := c.replacing[claim.Name]
		if replacing || claim.Spec.DesiredState != v1beta1.DesiredRunning || !claim.DeletionTimestamp.IsZero() || claim.Status.Phase != v1beta1.PhaseRunning {
			underway++ // a repair under way counts against the limit until its claim is gone
		}
		if repair.Judged(claim.Status.Phase) && claim.DeletionTimestamp.IsZero() {
			nodes++
			unhealthy++
		}
	}
	left := repair.Allowed(nodes, unhealthy, underway)
	note := ""
	if repair.Outage(nodes, unhealthy) {
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

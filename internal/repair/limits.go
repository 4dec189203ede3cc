package repair

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// maxSharePercent is the share of a pool's nodes repaired at once, as Karpenter's node repair
// bounds it: a fault that takes many nodes at once is not fixed by replacing them all.
const maxSharePercent = 20

// Allowed is how many more repairs of a pool may start now: at most 20% of its nodes
// (rounded down, at least one) at once, less the repairs under way, and none while more
// than half of its nodes are unhealthy: that is an outage to report, as new nodes would
// likely fail alike, not nodes to replace.
func Allowed(poolNodes, unhealthy, underway int) int {
	if poolNodes <= 0 || Outage(poolNodes, unhealthy) {
		return 0
	}
	limit := max(poolNodes*maxSharePercent/100, 1)
	return max(limit-underway, 0)
}

// Outage reports whether more than half of a pool's nodes are unhealthy.
func Outage(poolNodes, unhealthy int) bool {
	return poolNodes > 0 && 2*unhealthy > poolNodes
}

// Judged reports whether node repair judges the Node of a claim in phase: only a node
// that runs, Running or Draining. Any other claim's Node is not Ready by design (its
// instance stopped, stopping, starting or warming up) or not yet, and its timeouts
// cover it.
func Judged(phase v1beta1.NodeClaimPhase) bool {
	return phase == v1beta1.PhaseRunning || phase == v1beta1.PhaseDraining
}

// Count counts a pool's claims (not being deleted) whose Node repair judges, and those
// of them whose Unhealthy condition is True: the nodes and unhealthy of Allowed and
// Outage.
func Count(claims []v1beta1.NodeClaim) (nodes, unhealthy int) {
	for i := range claims {
		c := &claims[i]
		if !c.DeletionTimestamp.IsZero() || !Judged(c.Status.Phase) {
			continue
		}
		nodes++
		if meta.IsStatusConditionTrue(c.Status.Conditions, v1beta1.ConditionUnhealthy) {
			unhealthy++
		}
	}
	return nodes, unhealthy
}

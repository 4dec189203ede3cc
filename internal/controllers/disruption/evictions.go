package disruption

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/pdbs"
	"github.com/stratos-sh/stratos/internal/state"
)

// evictionsBlocked says why the workload pods of the candidates cannot all be evicted
// now under their PodDisruptionBudgets, or is nil. The evictions already coming take
// from the budgets first: those of the pods on nodes going away and on nodes whose
// replacement is under way, the candidates' own Nodes aside. So a decision never counts
// on a disruption another one will use, and one decision's nodes count together.
func (c *Controller) evictionsBlocked(p *pass, cands ...candidate) *pdbs.Blocked {
	return c.evictionsBlockedUnder(p, p.pdbSet(), cands...)
}

// evictionsBlockedUnder is evictionsBlocked under the given budgets, such as those read
// again from the API server right before a write.
func (c *Controller) evictionsBlockedUnder(p *pass, budgets pdbs.Set, cands ...candidate) *pdbs.Blocked {
	own := map[string]bool{}
	var pods []*corev1.Pod
	for _, cand := range cands {
		own[cand.node.Name] = true
		pods = append(pods, cand.workloads()...)
	}
	evictions := budgets.Evictions()
	evictions.Commit(c.evictionsComing(p.snap, own))
	return evictions.Take(pods)
}

// evictionsComing are the workload pods that drains will evict whatever is decided now:
// those on nodes going away, and those on nodes whose replacement is under way, but the
// pods of the Nodes named in except.
func (c *Controller) evictionsComing(snap state.Snapshot, except map[string]bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range snap.Leaving {
		if !except[pod.Spec.NodeName] {
			out = append(out, pod)
		}
	}
	replaced := c.replacedNodes()
	for _, ns := range snap.Nodes {
		if !replaced[ns.Node.Name] || except[ns.Node.Name] {
			continue
		}
		for _, pod := range ns.Pods {
			if state.Workload(pod) && pod.Spec.NodeName == ns.Node.Name {
				out = append(out, pod)
			}
		}
	}
	return out
}

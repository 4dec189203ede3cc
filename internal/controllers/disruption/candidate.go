package disruption

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/state"
)

// candidate is a running claim of a pool with its Node and the pods bound to it.
type candidate struct {
	claim *v1beta1.NodeClaim
	node  *corev1.Node
	pods  []*corev1.Pod
	// awaited counts the pods provisioning placed on the claim that are not bound yet.
	awaited int
	// stale says why the claim should be replaced (Drifted, Expired, Rebalance), or is "".
	stale v1beta1.DisruptionReason
	// settled is set once the node's workload has not changed for consolidateAfter.
	settled bool
}

// candidates are the pool's claims that run, asked to, with a Node, and the pods on it,
// as the pass's picture shows them.
func candidates(snap state.Snapshot, pool *v1beta1.NodePool, claims []*v1beta1.NodeClaim, current claimtemplate.Current, now time.Time) []candidate {
	nodes := make(map[string]state.NodeState, len(snap.Nodes))
	for _, ns := range snap.Nodes {
		nodes[ns.Node.Name] = ns
	}
	var out []candidate
	for _, claim := range claims {
		ns, ok := nodes[claim.Status.NodeName]
		if !runningForPods(claim) || !ok {
			continue
		}
		cand := candidate{claim: claim, node: ns.Node, stale: claimtemplate.Stale(pool, claim, current, now)}
		if cand.stale == "" && rebalanceRecommended(pool, claim) {
			cand.stale = v1beta1.DisruptionRebalance
		}
		for _, pod := range ns.Pods {
			if pod.Spec.NodeName == ns.Node.Name {
				cand.pods = append(cand.pods, pod)
			} else {
				cand.awaited++ // nominated to the claim, not bound yet
			}
		}
		out = append(out, cand)
	}
	return out
}

// runningForPods reports whether a claim runs, asked to, with a Node.
func runningForPods(claim *v1beta1.NodeClaim) bool {
	return claim.DeletionTimestamp.IsZero() && claim.Spec.DesiredState == v1beta1.DesiredRunning &&
		claim.Status.Phase == v1beta1.PhaseRunning && claim.Status.NodeName != ""
}

// workloads are the pods bound to the candidate's Node that disrupting it would move:
// not DaemonSet or mirror pods, not finished ones.
func (c candidate) workloads() []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range c.pods {
		if state.Workload(pod) {
			out = append(out, pod)
		}
	}
	return out
}

// empty reports whether no workload pod is bound to the candidate's Node.
func (c candidate) empty() bool { return len(c.workloads()) == 0 }

// workloadKey names the candidate's workload pods, so that a change of them is seen.
func (c candidate) workloadKey() string {
	var uids []string
	for _, pod := range c.workloads() {
		uids = append(uids, string(pod.UID))
	}
	slices.Sort(uids)
	return strings.Join(uids, ",")
}

// blocked names what forbids disrupting the candidate voluntarily, or is "": the
// do-not-disrupt annotation on its Node or on one of its pods that has not finished.
func (c candidate) blocked() string {
	if c.node.Annotations[v1beta1.AnnotationDoNotDisrupt] == "true" {
		return "the Node is annotated " + v1beta1.AnnotationDoNotDisrupt
	}
	for _, pod := range c.pods {
		if pod.Annotations[v1beta1.AnnotationDoNotDisrupt] == "true" && !podutil.Finished(pod) {
			return "pod " + pod.Namespace + "/" + pod.Name + " is annotated " + v1beta1.AnnotationDoNotDisrupt
		}
	}
	return ""
}

// unmovable names a workload pod that consolidation must not evict, or is "": one no
// controller owns would not come back anywhere else.
func (c candidate) unmovable() string {
	for _, pod := range c.workloads() {
		if metav1.GetControllerOf(pod) == nil {
			return "pod " + pod.Namespace + "/" + pod.Name + " has no controller to recreate it"
		}
	}
	return ""
}

// settling remembers since when each claim's Node has run the same workload pods, none
// included. Consolidation waits consolidateAfter from then, so a node that just gained
// or lost a pod is left alone. It is kept in memory: after a restart the wait starts
// over, which only delays a give-back.
type settling map[string]settled

type settled struct {
	since time.Time
	pods  string
}

// observe records the candidate's workload pods at now and returns since when they have
// been the same.
func (s settling) observe(c candidate, now time.Time) time.Time {
	key := c.workloadKey()
	if last, ok := s[c.claim.Name]; ok && last.pods == key {
		return last.since
	}
	s[c.claim.Name] = settled{since: now, pods: key}
	return now
}

// forgetAllBut drops the claims not in live.
func (s settling) forgetAllBut(live map[string]bool) {
	for name := range s {
		if !live[name] {
			delete(s, name)
		}
	}
}

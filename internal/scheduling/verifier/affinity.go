package verifier

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// affinityAllows is InterPodAffinity's filter for the pod's required affinity: n must
// carry every term's topology key, and each term's domain must hold a bound pod that is
// in the sets of all the terms. When no bound pod is in all of them, a pod in all of
// them itself may go anywhere: the first of a group that wants to be together.
func (cl *cluster) affinityAllows(pod *corev1.Pod, n *node) *failure {
	a := pod.Spec.Affinity
	if a == nil || a.PodAffinity == nil || len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0 {
		return nil
	}
	terms := a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	sets := make([]podSet, len(terms))
	for i, t := range terms {
		s, err := termSet(pod, t)
		if err != nil {
			return &failure{RuleUnsupported, err.Error()}
		}
		sets[i] = s
	}
	g := cl.topo.groupOf(sets...)
	satisfied := true
	for _, t := range terms {
		count, ok := cl.topo.inDomain(g, t.TopologyKey, n)
		if !ok {
			return &failure{RulePodAffinity, fmt.Sprintf("the node has no %s label", t.TopologyKey)}
		}
		satisfied = satisfied && count > 0
	}
	if satisfied || (!cl.anyOnKeys(g, terms) && g.has(pod)) {
		return nil
	}
	return &failure{RulePodAffinity, "no pod the affinity selects in the node's domain"}
}

// anyOnKeys reports whether a pod of g is bound to a node carrying one of the terms' keys.
func (cl *cluster) anyOnKeys(g *group, terms []corev1.PodAffinityTerm) bool {
	for _, m := range cl.nodes {
		if g.perNode[m.index] == 0 {
			continue
		}
		for _, t := range terms {
			if _, ok := m.node.Labels[t.TopologyKey]; ok {
				return true
			}
		}
	}
	return false
}

// antiAffinityAllows is InterPodAffinity's filter for the pod's required anti-affinity:
// for each term whose key n carries, n's domain holds no pod the term selects.
func (cl *cluster) antiAffinityAllows(pod *corev1.Pod, n *node) *failure {
	a := pod.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return nil
	}
	for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		s, err := termSet(pod, t)
		if err != nil {
			return &failure{RuleUnsupported, err.Error()}
		}
		if count, ok := cl.topo.inDomain(cl.topo.groupOf(s), t.TopologyKey, n); ok && count > 0 {
			return &failure{RulePodAntiAffinity, fmt.Sprintf("%d pods the anti-affinity selects in %s=%s", count, t.TopologyKey, n.node.Labels[t.TopologyKey])}
		}
	}
	return nil
}

// existingAntiAffinityAllows is InterPodAffinity's filter for the bound pods' required
// anti-affinity: no bound pod whose term selects the pod is in n's domain of the term's key.
func (cl *cluster) existingAntiAffinityAllows(pod *corev1.Pod, n *node) *failure {
	for _, at := range cl.topo.antiList {
		value, ok := n.node.Labels[at.key]
		if ok && at.occupied[value] > 0 && at.set.has(pod) {
			return &failure{RuleExistingAntiAffinity, fmt.Sprintf("a bound pod in %s=%s repels it", at.key, value)}
		}
	}
	return nil
}

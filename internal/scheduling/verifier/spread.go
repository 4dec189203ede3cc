package verifier

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// spreadAllows is PodTopologySpread's filter for the DoNotSchedule constraints. The
// domains are the values of the constraint's key among the eligible nodes: those that
// carry every key of the pod's constraints and, by the node inclusion policies, match
// its node affinity (honoured unless asked not to) and tolerate its taints (ignored
// unless asked). On n's domain, the matching pods plus the pod itself (when it matches)
// may exceed the fewest of any domain by maxSkew at most; with fewer domains than
// minDomains, the fewest counts as zero.
func (cl *cluster) spreadAllows(pod *corev1.Pod, n *node) *failure {
	var hard []corev1.TopologySpreadConstraint
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == corev1.DoNotSchedule {
			hard = append(hard, c)
		}
	}
	for _, c := range hard {
		if _, ok := n.node.Labels[c.TopologyKey]; !ok {
			return &failure{RuleTopologySpread, fmt.Sprintf("the node has no %s label", c.TopologyKey)}
		}
	}
	for _, c := range hard {
		selector, err := selectorOf(c.LabelSelector, c.MatchLabelKeys, pod)
		if err != nil {
			return &failure{RuleUnsupported, err.Error()}
		}
		set := podSet{namespaces: map[string]bool{pod.Namespace: true}, selector: selector}
		g := cl.topo.groupOf(set)
		counts := map[string]int{}
		for _, m := range cl.eligible(pod, c, hard) {
			counts[m.node.Labels[c.TopologyKey]] += g.perNode[m.index]
		}
		fewest := -1
		for _, count := range counts {
			if fewest < 0 || count < fewest {
				fewest = count
			}
		}
		if fewest < 0 || (c.MinDomains != nil && len(counts) < int(*c.MinDomains)) {
			fewest = 0
		}
		self := 0
		if set.has(pod) {
			self = 1
		}
		domain := n.node.Labels[c.TopologyKey]
		if skew := counts[domain] + self - fewest; skew > int(c.MaxSkew) {
			return &failure{RuleTopologySpread, fmt.Sprintf("%s=%s would hold %d matching pods, %d more than the fewest of %d domains (%d); maxSkew %d",
				c.TopologyKey, domain, counts[domain]+self, skew, len(counts), fewest, c.MaxSkew)}
		}
	}
	return nil
}

// eligible returns the nodes a constraint of pod counts pods on, cached by what decides it.
func (cl *cluster) eligible(pod *corev1.Pod, c corev1.TopologySpreadConstraint, hard []corev1.TopologySpreadConstraint) []*node {
	honourAffinity := c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
	honourTaints := c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
	keys := make([]string, len(hard))
	for i, h := range hard {
		keys[i] = h.TopologyKey
	}
	var affinity any
	if honourAffinity {
		affinity = []any{pod.Spec.NodeSelector, pod.Spec.Affinity}
	}
	var tolerations []corev1.Toleration
	if honourTaints {
		tolerations = pod.Spec.Tolerations
	}
	raw, _ := json.Marshal([]any{keys, affinity, honourTaints, tolerations})
	if nodes, ok := cl.eligibleBy[string(raw)]; ok {
		return nodes
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	var out []*node
	for _, m := range cl.nodes {
		if !hasKeys(m.node, keys) {
			continue
		}
		if honourAffinity {
			if ok, err := required.Match(m.node); err != nil || !ok {
				continue
			}
		}
		if _, untolerated := untoleratedTaint(pod, m.node); honourTaints && untolerated {
			continue
		}
		out = append(out, m)
	}
	cl.eligibleBy[string(raw)] = out
	return out
}

func hasKeys(n *corev1.Node, keys []string) bool {
	for _, k := range keys {
		if _, ok := n.Labels[k]; !ok {
			return false
		}
	}
	return true
}

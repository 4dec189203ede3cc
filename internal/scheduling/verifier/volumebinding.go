package verifier

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/component-helpers/storage/volume"
)

// zoneAliases are the labels volumes name a node's zone by besides
// topology.kubernetes.io/zone: the EBS CSI driver's own, and the one old volumes carry.
var zoneAliases = []string{"topology.ebs.csi.aws.com/zone", corev1.LabelFailureDomainBetaZone}

// volumesBind is VolumeBinding's filter: every claim of the pod can be used on n. A bound
// claim's volume must accept n by its node affinity; an unbound WaitForFirstConsumer
// claim's class must allow n's topology.
func (cl *cluster) volumesBind(pod *corev1.Pod, n *node) *failure {
	for _, pc := range cl.storage.claimsOf(pod) {
		switch {
		case pc.refused != "":
			return &failure{RuleVolumeBinding, pc.refused}
		case pc.pv != nil:
			if err := volume.CheckNodeAffinity(pc.pv, n.volumeLabels()); err != nil {
				return &failure{RuleVolumeBinding, fmt.Sprintf("volume %s of claim %s does not accept the node: %v", pc.pv.Name, pc.key, err)}
			}
		case pc.allowed != nil:
			// A term it cannot parse matches no node, as in kube-scheduler.
			if ok, _ := pc.allowed.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: n.volumeLabels()}}); !ok {
				return &failure{RuleVolumeBinding, fmt.Sprintf("the node is outside the allowed topologies of class %s of unbound claim %s", pc.class.Name, pc.key)}
			}
		}
	}
	return nil
}

// topologySelector reads a class's allowed topologies as a node selector: a term as the
// node selector term of the same expressions with the In operator. Like kube-scheduler,
// the selector matches a node that any term matches, and no terms match every node.
func topologySelector(terms []corev1.TopologySelectorTerm) *nodeaffinity.LazyErrorNodeSelector {
	if len(terms) == 0 {
		return nil
	}
	selector := &corev1.NodeSelector{}
	for _, t := range terms {
		var term corev1.NodeSelectorTerm
		for _, e := range t.MatchLabelExpressions {
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{Key: e.Key, Operator: corev1.NodeSelectorOpIn, Values: e.Values})
		}
		selector.NodeSelectorTerms = append(selector.NodeSelectorTerms, term)
	}
	return nodeaffinity.NewLazyErrorNodeSelector(selector)
}

// volumeLabels returns n's labels as volumes read them: with the zone also under each
// alias the node does not carry itself.
func (n *node) volumeLabels() map[string]string {
	if n.withAliases != nil {
		return n.withAliases
	}
	n.withAliases = make(map[string]string, len(n.node.Labels)+len(zoneAliases))
	for k, v := range n.node.Labels {
		n.withAliases[k] = v
	}
	if zone, ok := n.node.Labels[corev1.LabelTopologyZone]; ok {
		for _, alias := range zoneAliases {
			if _, has := n.withAliases[alias]; !has {
				n.withAliases[alias] = zone
			}
		}
	}
	return n.withAliases
}

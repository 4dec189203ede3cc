// Package verifier checks a scheduling decision the way kube-scheduler would take it.
// It replays the placements in order on the final set of nodes, and for each pod asks
// what kube-scheduler's filters ask at that moment: resources, node selector and
// required node affinity, taints, host ports, topology spread, and required pod affinity
// and anti-affinity, the anti-affinity of the pods already bound included, and the
// volumes: a bound claim's volume's node affinity, an unbound claim's class, and the CSI
// drivers' attach limits. It also checks the pools' limits on the new nodes.
//
// Of the volume filters it checks what a decision of Stratos can break. An ephemeral
// volume's claim that is not created yet counts as its template's claim, unbound; a
// claim with a volume name counts as bound; a volume's zone under the EBS driver's label
// or the old beta label is read as the node's topology.kubernetes.io/zone. It does not
// match unbound claims to existing volumes (a class without a provisioner), nor read the
// selected-node annotation, storage capacity, VolumeAttachments, or in-tree volumes that
// kube-scheduler counts as migrated to CSI.
//
// It shares no code with the simulation it checks (internal/scheduling): it works on
// plain Nodes and Pods, does its own counting, and takes its predicates from the
// libraries kube-scheduler itself uses (k8s.io/component-helpers). It is written for
// clarity, not speed, beyond the indexes that keep 20,000 pods within seconds.
package verifier

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Node is a node of the cluster the placements are replayed on.
type Node struct {
	Node *corev1.Node
	// Pods are bound to the node before the replay: running, or nominated earlier.
	Pods []*corev1.Pod
	// AwaitsDaemonSets is set for a node that does not exist yet: the DaemonSets that
	// would run there are bound to it before the replay.
	AwaitsDaemonSets bool
	// Pool is set for a node the decision creates; its Capacity counts in the pool's limits.
	Pool     string
	Capacity corev1.ResourceList
	// AttachLimits, for a node without a CSINode (one the decision creates, or a claim
	// whose node has not registered), is the most volumes each CSI driver may attach,
	// by driver name; a driver absent is unlimited.
	AttachLimits map[string]int64
}

// Placement binds a pod to the node of that name.
type Placement struct {
	Pod  *corev1.Pod
	Node string
}

// Limit is what a pool may still add: nodes (negative: unlimited), and the capacity of
// each limited resource (cpu, memory, nvidia.com/gpu, ...; a resource absent is
// unlimited).
type Limit struct {
	Pool      string
	Nodes     int
	Resources corev1.ResourceList
}

// Case is a decision to check.
type Case struct {
	Nodes []Node
	// Placements, in the order the pods are bound.
	Placements []Placement
	// DaemonSets are the DaemonSets' pod templates.
	DaemonSets []*corev1.Pod
	Limits     []Limit
	// Storage holds the objects kube-scheduler's volume filters read.
	Storage Storage
}

// Storage is what the volume filters read: claims, volumes, classes, and the CSINodes
// of nodes that exist (a CSINode is named as its node).
type Storage struct {
	Claims   []*corev1.PersistentVolumeClaim
	Volumes  []*corev1.PersistentVolume
	Classes  []*storagev1.StorageClass
	CSINodes []*storagev1.CSINode
}

// Rule names what a violation breaks.
type Rule string

const (
	RuleUnknownNode     Rule = "UnknownNode"
	RuleBoundTwice      Rule = "BoundTwice"
	RuleResources       Rule = "NodeResourcesFit"
	RuleNodeAffinity    Rule = "NodeAffinity"
	RuleTaints          Rule = "TaintToleration"
	RuleHostPorts       Rule = "NodePorts"
	RuleTopologySpread  Rule = "PodTopologySpread"
	RulePodAffinity     Rule = "InterPodAffinity"
	RulePodAntiAffinity Rule = "InterPodAntiAffinity"
	// RuleExistingAntiAffinity is a bound pod's anti-affinity keeping the pod away.
	RuleExistingAntiAffinity Rule = "ExistingPodsAntiAffinity"
	RuleVolumeBinding        Rule = "VolumeBinding"
	RuleVolumeLimits         Rule = "NodeVolumeLimits"
	RuleUnsupported          Rule = "Unsupported"
	RulePoolNodes            Rule = "PoolNodeLimit"
	RulePoolCPU              Rule = "PoolCPULimit"
	RulePoolMemory           Rule = "PoolMemoryLimit"
	RulePoolResource         Rule = "PoolResourceLimit"
)

// Violation is a placement kube-scheduler would refuse, or a limit the result exceeds.
type Violation struct {
	Rule   Rule
	Pod    string // namespace/name; empty for a limit
	Node   string
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: pod %s on %s: %s", v.Rule, v.Pod, v.Node, v.Detail)
}

// Check replays c and returns every violation, in replay order.
func Check(c Case) []Violation {
	_, found := replay(c)
	return append(found, checkLimits(c)...)
}

// Admitting replays c and returns, for each of pods, the nodes that would take it then.
func Admitting(c Case, pods []*corev1.Pod) [][]string {
	cl, _ := replay(c)
	out := make([][]string, len(pods))
	for i, pod := range pods {
		for _, n := range cl.nodes {
			if len(cl.filter(pod, n)) == 0 {
				out[i] = append(out[i], n.node.Name)
			}
		}
	}
	return out
}

// replay binds the nodes' pods, then the placements in order, and returns the cluster
// and the placements its filters refused.
func replay(c Case) (*cluster, []Violation) {
	cl := newCluster(c.Nodes, c.Storage)
	for i := range c.Nodes {
		n := cl.nodes[i]
		for _, pod := range c.Nodes[i].Pods {
			cl.bind(pod, n)
		}
		if c.Nodes[i].AwaitsDaemonSets {
			for _, ds := range daemonSetsFor(c.DaemonSets, n.node) {
				cl.bind(ds, n)
			}
		}
	}
	var found []Violation
	bound := map[*corev1.Pod]bool{}
	for _, p := range c.Placements {
		n, ok := cl.byName[p.Node]
		name := p.Pod.Namespace + "/" + p.Pod.Name
		switch {
		case !ok:
			found = append(found, Violation{Rule: RuleUnknownNode, Pod: name, Node: p.Node, Detail: "no such node"})
			continue
		case bound[p.Pod]:
			found = append(found, Violation{Rule: RuleBoundTwice, Pod: name, Node: p.Node, Detail: "the pod is bound already"})
			continue
		}
		bound[p.Pod] = true
		for _, f := range cl.filter(p.Pod, n) {
			found = append(found, Violation{Rule: f.rule, Pod: name, Node: p.Node, Detail: f.detail})
		}
		cl.bind(p.Pod, n)
	}
	return cl, found
}

// failure is one filter's refusal.
type failure struct {
	rule   Rule
	detail string
}

// filter runs kube-scheduler's filters for pod on n, against the pods bound so far.
func (cl *cluster) filter(pod *corev1.Pod, n *node) []failure {
	var out []failure
	for _, f := range []func(*corev1.Pod, *node) *failure{
		fitsResources, matchesNodeAffinity, toleratesTaints, portsFree,
		cl.spreadAllows, cl.affinityAllows, cl.antiAffinityAllows, cl.existingAntiAffinityAllows,
		cl.volumesBind, cl.attachesWithin,
	} {
		if r := f(pod, n); r != nil {
			out = append(out, *r)
		}
	}
	return out
}

// checkLimits adds up the new nodes of each limited pool.
func checkLimits(c Case) []Violation {
	var out []Violation
	for _, l := range c.Limits {
		count := 0
		added := corev1.ResourceList{}
		for _, n := range c.Nodes {
			if n.Pool != l.Pool {
				continue
			}
			count++
			for name := range l.Resources {
				sum := added[name]
				sum.Add(n.Capacity[name])
				added[name] = sum
			}
		}
		if l.Nodes >= 0 && count > l.Nodes {
			out = append(out, Violation{Rule: RulePoolNodes, Node: l.Pool, Detail: fmt.Sprintf("%d new nodes, the limit leaves %d", count, l.Nodes)})
		}
		names := make([]string, 0, len(l.Resources))
		for name := range l.Resources {
			names = append(names, string(name))
		}
		sort.Strings(names)
		for _, name := range names {
			sum, limit := added[corev1.ResourceName(name)], l.Resources[corev1.ResourceName(name)]
			if sum.Cmp(limit) > 0 {
				out = append(out, Violation{Rule: limitRule(corev1.ResourceName(name)), Node: l.Pool, Detail: fmt.Sprintf("new nodes have %s %s, the limit leaves %s", sum.String(), name, limit.String())})
			}
		}
	}
	return out
}

// limitRule names the rule a pool's limit on a resource is.
func limitRule(name corev1.ResourceName) Rule {
	switch name {
	case corev1.ResourceCPU:
		return RulePoolCPU
	case corev1.ResourceMemory:
		return RulePoolMemory
	}
	return RulePoolResource
}

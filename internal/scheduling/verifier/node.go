package verifier

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// node is a node during the replay: what its bound pods request, which host ports they
// hold and which volumes they attach.
type node struct {
	index     int
	node      *corev1.Node
	pods      []*corev1.Pod
	requested corev1.ResourceList
	ports     []corev1.ContainerPort
	// limits are the most volumes each CSI driver may attach; attached and perDriver
	// are the volumes attached, once each, and their number per driver.
	limits    map[string]int64
	attached  map[volumeID]bool
	perDriver map[string]int64
	// withAliases caches the labels volumes read (volumeLabels).
	withAliases map[string]string
}

// cluster is the replay's state: the nodes and the counts of the pods bound to them.
type cluster struct {
	nodes   []*node
	byName  map[string]*node
	topo    *topology
	storage *storage
	// eligibleBy caches the nodes a spread constraint counts on, by what decides them.
	eligibleBy map[string][]*node
}

func newCluster(nodes []Node, s Storage) *cluster {
	cl := &cluster{byName: map[string]*node{}, eligibleBy: map[string][]*node{}, storage: newStorage(s)}
	for i, n := range nodes {
		nd := &node{index: i, node: n.Node, requested: corev1.ResourceList{}, limits: attachLimits(cl.storage.csiNodes[n.Node.Name], n.AttachLimits)}
		cl.nodes = append(cl.nodes, nd)
		cl.byName[n.Node.Name] = nd
	}
	cl.topo = newTopology(cl.nodes)
	return cl
}

// bind records pod on n.
func (cl *cluster) bind(pod *corev1.Pod, n *node) {
	n.pods = append(n.pods, pod)
	for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		sum := n.requested[name]
		sum.Add(q)
		n.requested[name] = sum
	}
	n.ports = append(n.ports, hostPortsOf(pod)...)
	cl.attach(pod, n)
	cl.topo.bound(pod, n)
}

// fitsResources is NodeResourcesFit: the pod count, and every resource the pod requests,
// within what the node has left.
func fitsResources(pod *corev1.Pod, n *node) *failure {
	allocatable := n.node.Status.Allocatable
	if pods := allocatable[corev1.ResourcePods]; int64(len(n.pods)+1) > pods.Value() {
		return &failure{RuleResources, fmt.Sprintf("too many pods: %d bound, room for %s", len(n.pods), pods.String())}
	}
	for name, want := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if want.Sign() <= 0 {
			continue
		}
		total := n.requested[name].DeepCopy()
		total.Add(want)
		if have, ok := allocatable[name]; !ok || total.Cmp(have) > 0 {
			return &failure{RuleResources, fmt.Sprintf("insufficient %s: %s requested in all, %s allocatable", name, total.String(), quantityString(allocatable, name))}
		}
	}
	return nil
}

func quantityString(list corev1.ResourceList, name corev1.ResourceName) string {
	if q, ok := list[name]; ok {
		return q.String()
	}
	return "none"
}

// matchesNodeAffinity is NodeAffinity: the node selector and the required node affinity.
func matchesNodeAffinity(pod *corev1.Pod, n *node) *failure {
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(n.node); err != nil || !ok {
		return &failure{RuleNodeAffinity, fmt.Sprintf("node labels %v do not match the pod's node selector or required affinity", n.node.Labels)}
	}
	return nil
}

// toleratesTaints is TaintToleration: every NoSchedule and NoExecute taint tolerated.
func toleratesTaints(pod *corev1.Pod, n *node) *failure {
	if taint, untolerated := untoleratedTaint(pod, n.node); untolerated {
		return &failure{RuleTaints, fmt.Sprintf("taint %s not tolerated", taint.ToString())}
	}
	return nil
}

func untoleratedTaint(pod *corev1.Pod, n *corev1.Node) (corev1.Taint, bool) {
	return corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
}

// portsFree is NodePorts: no host port the pod wants is bound on the node for the same
// protocol and an overlapping address.
func portsFree(pod *corev1.Pod, n *node) *failure {
	for _, want := range hostPortsOf(pod) {
		for _, taken := range n.ports {
			if want.HostPort == taken.HostPort && want.Protocol == taken.Protocol && addressesOverlap(want.HostIP, taken.HostIP) {
				return &failure{RuleHostPorts, fmt.Sprintf("host port %s/%d is taken", want.Protocol, want.HostPort)}
			}
		}
	}
	return nil
}

func addressesOverlap(a, b string) bool {
	wildcard := func(ip string) bool { return ip == "" || ip == "0.0.0.0" }
	return wildcard(a) || wildcard(b) || a == b
}

// hostPortsOf lists the host ports of the pod's containers and init containers, with
// the protocol defaulted as the API server defaults it.
func hostPortsOf(pod *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, p := range c.Ports {
				if p.HostPort <= 0 {
					continue
				}
				if p.Protocol == "" {
					p.Protocol = corev1.ProtocolTCP
				}
				out = append(out, p)
			}
		}
	}
	return out
}

// daemonSetsFor returns the DaemonSet pods the DaemonSet controller would run on n: those
// whose node affinity n matches and that tolerate its taints.
func daemonSetsFor(daemonSets []*corev1.Pod, n *corev1.Node) []*corev1.Pod {
	var out []*corev1.Pod
	for _, ds := range daemonSets {
		if ok, err := nodeaffinity.GetRequiredNodeAffinity(ds).Match(n); err != nil || !ok {
			continue
		}
		if _, untolerated := untoleratedTaint(ds, n); untolerated {
			continue
		}
		out = append(out, ds)
	}
	return out
}

package scheduling

import (
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// podInfo is what the simulation needs of a pod, worked out once.
type podInfo struct {
	pod      *corev1.Pod
	requests resources
	// affinityKey identifies the pod's node selector and required node affinity; pods
	// that share it match the same nodes. It is "" for a pod with neither.
	affinityKey string
	affinity    nodeaffinity.RequiredNodeAffinity
	// byOffering is true when the node selector or affinity names a label that differs
	// between the offerings of one instance type (the zone or the capacity type); when
	// false, one offering of a type answers for all of them.
	byOffering bool
	// tolerationsKey identifies the pod's tolerations.
	tolerationsKey string
	ports          []hostPort
	// Topology: the terms that constrain the pod, and the groups its labels match.
	hard, soft []term
	matches    []int
	// needsZone is true when the pod's zone matters to a constraint: placing it on a
	// new claim then ties the claim to a zone.
	needsZone bool
	// volumes is what the pod's volumes ask of its node.
	volumes podVolumes
}

// hostPort is a port a container binds on the node.
type hostPort struct {
	port     int32
	protocol corev1.Protocol
	ip       string
}

// conflicts reports whether two host ports cannot share a node.
func (a hostPort) conflicts(b hostPort) bool {
	if a.port != b.port || a.protocol != b.protocol {
		return false
	}
	return a.ip == b.ip || a.ip == "" || b.ip == "" || a.ip == "0.0.0.0" || b.ip == "0.0.0.0"
}

// hostPorts lists the host ports of a pod's containers and init containers.
func hostPorts(pod *corev1.Pod) []hostPort {
	var ports []hostPort
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range containers {
			for _, p := range c.Ports {
				if p.HostPort == 0 {
					continue
				}
				protocol := p.Protocol
				if protocol == "" {
					protocol = corev1.ProtocolTCP
				}
				ports = append(ports, hostPort{port: p.HostPort, protocol: protocol, ip: p.HostIP})
			}
		}
	}
	return ports
}

// newPodInfo works out what the simulation needs of a pending pod. The topology terms
// are registered with t.
func newPodInfo(pod *corev1.Pod, t *topology) *podInfo {
	p := &podInfo{
		pod:      pod,
		requests: podRequests(pod),
		ports:    hostPorts(pod),
	}
	var required *corev1.NodeSelector
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(pod.Spec.NodeSelector) > 0 || required != nil {
		key, _ := json.Marshal(struct {
			S map[string]string    `json:"s"`
			R *corev1.NodeSelector `json:"r"`
		}{pod.Spec.NodeSelector, required})
		p.affinityKey = string(key)
		p.affinity = nodeaffinity.GetRequiredNodeAffinity(pod)
		p.byOffering = namesOfferingLabel(pod.Spec.NodeSelector, required)
	}
	if len(pod.Spec.Tolerations) > 0 {
		key, _ := json.Marshal(pod.Spec.Tolerations)
		p.tolerationsKey = string(key)
	}
	p.hard, p.soft = t.termsOf(pod)
	return p
}

// offeringLabels are the labels of a new node that differ between the offerings of its
// instance type (cloudprovider.InstanceType.Labels); the pool's template may set neither
// (the API refuses template labels under stratos.sh/ and the zone).
var offeringLabels = []string{corev1.LabelTopologyZone, v1beta1.LabelCapacityType}

// namesOfferingLabel reports whether a node selector or required node affinity names one
// of offeringLabels.
func namesOfferingLabel(selector map[string]string, required *corev1.NodeSelector) bool {
	for _, key := range offeringLabels {
		if _, ok := selector[key]; ok {
			return true
		}
		if required == nil {
			continue
		}
		for _, term := range required.NodeSelectorTerms {
			if slices.ContainsFunc(term.MatchExpressions, func(r corev1.NodeSelectorRequirement) bool { return r.Key == key }) {
				return true
			}
		}
	}
	return false
}

// matchesNodeAffinity reports whether node satisfies the pod's node selector and
// required node affinity.
func (p *podInfo) matchesNodeAffinity(node *corev1.Node) bool {
	if p.affinityKey == "" {
		return true
	}
	ok, err := p.affinity.Match(node)
	return ok && err == nil
}

// hasTopology reports whether topology or pod affinity can keep the pod from a node.
func (p *podInfo) hasTopology() bool {
	return len(p.hard) > 0 || len(p.soft) > 0 || len(p.matches) > 0
}

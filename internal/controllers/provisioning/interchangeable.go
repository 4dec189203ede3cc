package provisioning

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// reservationMatters reports whether a decision's claims are to be reserved to the pods
// it placed on them (see reserve). The reservation costs a write per pod and one per
// Node, and it is there for one case: kube-scheduler gives the first Nodes to open to
// whichever pods wait, and a pod that fits only its own claim (another architecture, a
// large request, anti-affinity) can find its room taken by a pod that could have gone
// anywhere. When every pod placed is of one scheduling shape, that cannot happen: each
// claim was chosen for pods of that shape, so every pod fits every claim's Node as well
// as its own, and however kube-scheduler spreads them, the Nodes hold them all, as many
// on each as the room the decision found, whatever the claims' types, zones or pools.
// Pods of more than one shape, or a case this cannot tell (pods with claims to volumes,
// which may tie them to a zone or a Node), are reserved.
func reservationMatters(pods []*corev1.Pod, claims []*v1beta1.NodeClaim) bool {
	if len(pods) == 0 || len(claims) == 0 {
		return false
	}
	first := shapeOf(pods[0])
	for _, pod := range pods {
		if hasClaimedVolume(pod) || !equality.Semantic.DeepEqual(first, shapeOf(pod)) {
			return true
		}
	}
	return false
}

// podShape is what kube-scheduler reads of a pod to choose its Node.
type podShape struct {
	Requests                  corev1.ResourceList
	NodeSelector              map[string]string
	Affinity                  *corev1.Affinity
	Tolerations               []corev1.Toleration
	TopologySpreadConstraints []corev1.TopologySpreadConstraint
	Priority                  *int32
	RuntimeClassName          *string
	SchedulingGates           []corev1.PodSchedulingGate
	HostPorts                 []corev1.ContainerPort
	// Labels are what the pods' own affinity terms and spread constraints select: two
	// pods with the same terms but different labels are not interchangeable.
	Labels map[string]string
}

func shapeOf(pod *corev1.Pod) podShape {
	s := podShape{
		Requests:                  resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}),
		NodeSelector:              pod.Spec.NodeSelector,
		Affinity:                  pod.Spec.Affinity,
		TopologySpreadConstraints: pod.Spec.TopologySpreadConstraints,
		Priority:                  pod.Spec.Priority,
		RuntimeClassName:          pod.Spec.RuntimeClassName,
		SchedulingGates:           pod.Spec.SchedulingGates,
	}
	// A toleration of an earlier reservation is left by a pod planned again (tolerations
	// only grow); it lets the pod onto a claim of another decision, not this one.
	for _, t := range pod.Spec.Tolerations {
		if t.Key != v1beta1.TaintReservedKey {
			s.Tolerations = append(s.Tolerations, t)
		}
	}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				s.HostPorts = append(s.HostPorts, port)
			}
		}
	}
	if a := pod.Spec.Affinity; len(pod.Spec.TopologySpreadConstraints) > 0 || a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		s.Labels = pod.Labels
	}
	return s
}

// hasClaimedVolume: a pod's claim to a volume may tie it to a zone or a Node that the
// other pods' claims do not.
func hasClaimedVolume(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim != nil || v.Ephemeral != nil
	})
}

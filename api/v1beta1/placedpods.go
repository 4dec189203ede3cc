package v1beta1

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ListsPlacedPod reports whether claim's AnnotationPlacedPods names pod, and can be about
// this pod: provisioning places pods only on claims not yet running, so a pod of the same
// name created after the claim turned Running (a StatefulSet's pod made again, say) is
// another pod.
func ListsPlacedPod(claim *NodeClaim, pod *corev1.Pod) bool {
	listed := claim.Annotations[AnnotationPlacedPods]
	if listed == "" || !slices.Contains(strings.Split(listed, ","), pod.Namespace+"/"+pod.Name) {
		return false
	}
	running := claim.Status.LastPhaseChangeTime
	return claim.Status.Phase != PhaseRunning || running == nil || !pod.CreationTimestamp.After(running.Time)
}

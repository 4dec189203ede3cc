// Package podutil answers the questions about a pod that several parts of Stratos ask —
// whether it finished, whether a DaemonSet or the kubelet owns it, whether it is
// Stratos's own pre-pull pod — so that they all answer them the same way.
package podutil

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Finished reports whether the pod's containers ended for good: it succeeded or failed.
// A finished pod holds no capacity and never comes back.
func Finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// OwnedByDaemonSet reports whether a DaemonSet controls the pod: its controller places
// it on every matching node, so neither provisioning nor a drain moves it.
func OwnedByDaemonSet(pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	return owner != nil && owner.Kind == "DaemonSet"
}

// Mirror reports whether the pod is a static pod's mirror, which the kubelet owns.
func Mirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

// PrePull reports whether the pod is the pod Stratos runs on a warming node to pull its
// pool's warmup images: one in namespace, the namespace Stratos creates them in
// (--prepull-namespace), controlled by a NodeClaim. It is part of the node's warmup,
// gone before the node stops or takes pods: never workload, never room taken. Its
// stratos.sh/prepull label does not tell it: any pod can carry that label, and a pod
// taken for a pre-pull pod would make its node look empty. Only who may create pods in
// the operator's namespace can make a pod that passes for one.
func PrePull(pod *corev1.Pod, namespace string) bool {
	if pod.Namespace != namespace {
		return false
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "NodeClaim" {
		return false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	return err == nil && gv.Group == v1beta1.Group
}

// Condition returns the pod's condition of type t, or nil.
func Condition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

package state

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podutil"
)

// Provisionable reports whether provisioning should find capacity for a pod: kube-scheduler
// marked it Unschedulable, and it is not bound, terminating, a DaemonSet's pod (its
// controller places it), a mirror pod, a pod a preemption is making room for, or a pod
// whose owner opted it out with stratos.sh/do-not-provision: "true".
func Provisionable(pod *corev1.Pod) bool {
	if pod.Spec.NodeName != "" || !pod.DeletionTimestamp.IsZero() || pod.Status.NominatedNodeName != "" {
		return false
	}
	if podutil.Mirror(pod) || podutil.OwnedByDaemonSet(pod) || pod.Annotations[v1beta1.AnnotationDoNotProvision] == "true" {
		return false
	}
	scheduled := podutil.Condition(pod, corev1.PodScheduled)
	return scheduled != nil && scheduled.Status == corev1.ConditionFalse && scheduled.Reason == corev1.PodReasonUnschedulable
}

// Workload reports whether a pod is workload that a Node must lose before it is empty or
// drained: anything but a DaemonSet's pod (its controller would only put it back), a
// mirror pod (the kubelet's) or a pod that finished. Stratos's pre-pull pods are not
// workload either (the lifecycle controller removes them itself before the node stops
// or runs), but telling them needs the namespace they are made in: the cluster state
// leaves them out of its snapshots, and the drain, which lists pods itself, asks
// podutil.PrePull.
func Workload(pod *corev1.Pod) bool {
	return !podutil.Mirror(pod) && !podutil.OwnedByDaemonSet(pod) && !podutil.Finished(pod)
}

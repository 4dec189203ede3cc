package explain

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podutil"
)

// Scope says whether provisioning finds capacity for a pending pod, and why not.
type Scope struct {
	// Provisionable is true when provisioning acts on the pod: kube-scheduler marked it
	// Unschedulable and nothing else keeps Stratos out.
	Provisionable bool `json:"provisionable"`
	// Why says why provisioning leaves the pod alone; empty when it does not.
	Why string `json:"why,omitempty"`
	// OptedIn is true when the pod asks for Stratos's nodes (a stratos.sh/ label in its
	// node selector or required affinity, or a toleration of a pool's taint): beside
	// another autoscaler, Stratos serves only such pods (--pod-scope, docs/migrating.md).
	OptedIn bool `json:"optedIn"`
}

// notOptedIn says what a pod that does not opt in depends on: the operator's pod scope,
// which this command cannot read, so both cases are named.
const notOptedIn = "it does not opt in to Stratos (no stratos.sh/ label in its node selector or required affinity, no toleration of a pool's taint), " +
	"so Stratos serves it only while its pod scope is all: --pod-scope=all, or auto with no Karpenter NodePool and no Cluster Autoscaler status ConfigMap in the cluster (the metric stratos_pod_scope says which)"

// scopeOf answers for a pod not bound what internal/state's Provisionable answers, and
// says which rule leaves the pod out: the unit tests hold both to the same answer.
func scopeOf(pod *corev1.Pod) Scope {
	out := func(format string, args ...any) Scope { return Scope{Why: fmt.Sprintf(format, args...)} }
	switch {
	case pod.Spec.NodeName != "":
		return out("it is bound to node %s", pod.Spec.NodeName)
	case !pod.DeletionTimestamp.IsZero():
		return out("it is being deleted")
	case pod.Status.NominatedNodeName != "":
		return out("kube-scheduler is preempting pods on node %s to make room for it (status.nominatedNodeName)", pod.Status.NominatedNodeName)
	case podutil.Mirror(pod):
		return out("it is a static pod's mirror: the kubelet owns it")
	case podutil.OwnedByDaemonSet(pod):
		return out("it is a DaemonSet's pod: its controller places it on the nodes that match, and no node is made for it")
	case pod.Annotations[v1beta1.AnnotationDoNotProvision] == "true":
		return out("its annotation %s: \"true\" opts it out", v1beta1.AnnotationDoNotProvision)
	}
	scheduled := podutil.Condition(pod, corev1.PodScheduled)
	switch {
	case len(pod.Spec.SchedulingGates) > 0:
		gates := make([]string, len(pod.Spec.SchedulingGates))
		for i, g := range pod.Spec.SchedulingGates {
			gates[i] = g.Name
		}
		return out("its scheduling gates (%s) keep kube-scheduler from trying it, and Stratos acts only on pods kube-scheduler marked Unschedulable", strings.Join(gates, ", "))
	case scheduled == nil:
		return out("%s has not tried to schedule it yet; Stratos acts only on pods kube-scheduler marked Unschedulable", schedulerOf(pod))
	case scheduled.Status != corev1.ConditionFalse || scheduled.Reason != corev1.PodReasonUnschedulable:
		return out("%s has not marked it Unschedulable (PodScheduled is %s, reason %q); Stratos acts only on pods it did", schedulerOf(pod), scheduled.Status, scheduled.Reason)
	}
	return Scope{Provisionable: true}
}

func schedulerOf(pod *corev1.Pod) string {
	if pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == corev1.DefaultSchedulerName {
		return "kube-scheduler"
	}
	return fmt.Sprintf("the pod's scheduler (%s)", pod.Spec.SchedulerName)
}

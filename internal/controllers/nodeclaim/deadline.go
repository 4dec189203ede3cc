package nodeclaim

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	nodeutil "k8s.io/component-helpers/node/util"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// DeadlineForceMargin is how long before an interruption's deadline the drain of the
// interrupted node stops waiting for PodDisruptionBudgets and deletes the pods left: the
// instance dies at the deadline whatever the budgets say, and a pod deleted then still
// gets most of the margin to stop gracefully rather than being killed with its node.
const DeadlineForceMargin = 15 * time.Second

// deadlineKillMargin is how long before the deadline every pod's termination must end:
// the kubelet needs a moment after the grace period to kill the containers and confirm
// the deletion, and the instance's shutdown does not wait for it.
const deadlineKillMargin = 5 * time.Second

// interruptionDeadline is when the cloud takes the claim's instance away, as the
// interruption controller recorded it; ok is false for a claim that was not interrupted
// or whose notice names no deadline.
func interruptionDeadline(claim *v1beta1.NodeClaim) (deadline time.Time, ok bool) {
	notice := claim.Status.Interruption
	if notice == nil || notice.Deadline == nil || notice.Kind == v1beta1.InterruptionRebalance ||
		!meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionInterrupted) {
		return time.Time{}, false
	}
	return notice.Deadline.Time, true
}

// untilDeadlineForced is how long, from now, the drain of the claim may wait for
// PodDisruptionBudgets before it must delete the pods left to end before the
// interruption's deadline; the longest duration when the claim has no deadline.
func untilDeadlineForced(claim *v1beta1.NodeClaim, now time.Time) time.Duration {
	deadline, ok := interruptionDeadline(claim)
	if !ok {
		return time.Duration(1<<63 - 1)
	}
	return deadline.Add(-DeadlineForceMargin).Sub(now)
}

// deletionGrace is the grace period to ask for when a pod of the claim's Node is evicted
// or deleted at now, so that it ends before the interruption's deadline: the pod's own
// terminationGracePeriodSeconds cut to what is left (at least a second, so that the
// kubelet still stops it rather than the API server forgetting it), or nil to keep the
// pod's own.
func deletionGrace(claim *v1beta1.NodeClaim, pod *corev1.Pod, now time.Time) *int64 {
	deadline, ok := interruptionDeadline(claim)
	if !ok {
		return nil
	}
	own := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		own = *pod.Spec.TerminationGracePeriodSeconds
	}
	left := int64(deadline.Add(-deadlineKillMargin).Sub(now) / time.Second)
	if own <= left {
		return nil
	}
	return ptr.To(max(left, 1))
}

// hurriedGrace is the shorter grace period to delete a pod with that was already
// terminating when the claim's deadline became known (evicted by a drain to standby,
// say) and would end after it, or nil when its termination ends in time (a second's
// leeway, so that a pod hurried once is not hurried again).
func hurriedGrace(claim *v1beta1.NodeClaim, pod *corev1.Pod, now time.Time) *int64 {
	deadline, ok := interruptionDeadline(claim)
	if !ok || pod.DeletionTimestamp.IsZero() {
		return nil
	}
	killBy := deadline.Add(-deadlineKillMargin)
	if !pod.DeletionTimestamp.After(killBy.Add(time.Second)) {
		return nil
	}
	return ptr.To(max(int64(killBy.Sub(now)/time.Second), 1))
}

// abandonsTerminating reports whether the drain of the claim's Node leaves the pods
// already terminating on it behind: the claim is unhealthy and its Node not Ready, so
// that its kubelet cannot finish them; the Node's deletion lets the pod garbage
// collector remove them.
func abandonsTerminating(claim *v1beta1.NodeClaim, node *corev1.Node) bool {
	if !meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionUnhealthy) {
		return false
	}
	_, ready := nodeutil.GetNodeCondition(&node.Status, corev1.NodeReady)
	return ready == nil || ready.Status != corev1.ConditionTrue
}

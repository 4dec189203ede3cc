package nodeclaim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/repair"
)

// Reasons of a claim's Unhealthy condition turned False, and of the Events that say it
// changed. Turned True, its reason is repair.ReasonNotReady or the node condition's type.
const (
	// ReasonHealthy: the Node is healthy again as the pool's repair defines it.
	ReasonHealthy = "Healthy"
	// ReasonRepairDisabled: the pool's repair was turned off while the claim was unhealthy.
	ReasonRepairDisabled = "RepairDisabled"
	// ReasonNotRunning: the claim left Running and Draining, whose nodes alone are judged.
	ReasonNotRunning = "NotRunning"
	// ReasonNodeUnhealthy and ReasonNodeHealthy are the claim's Events when its
	// Unhealthy condition turns True and back to False.
	ReasonNodeUnhealthy = "NodeUnhealthy"
	ReasonNodeHealthy   = "NodeHealthy"
)

// judgeHealth sets the claim's Unhealthy condition from its Node's conditions and its
// pool's repair policy, and returns how long until the Node turns unhealthy if its
// conditions stay as they are (0 when none is counting), for a requeue then: nothing else
// brings the claim back at that moment. Only a node that runs is judged; the Node of a
// standby, stopping, starting or warming claim is not Ready by design. The condition is
// written only when it changes, and set False only once it has been True, so that a
// healthy claim carries none. Node changes reach the claim through the Node watch, whose
// predicate passes changes of a condition's status or transition time but not heartbeats.
func (r *Lifecycle) judgeHealth(ctx context.Context, claim *v1beta1.NodeClaim) (time.Duration, error) {
	if !repair.Judged(claim.Status.Phase) {
		r.clearUnhealthy(claim, ReasonNotRunning, fmt.Sprintf("Node repair judges running nodes only; the claim is %s", claim.Status.Phase))
		return 0, nil
	}
	pool := r.poolOf(ctx, claim)
	if pool == nil {
		return 0, nil // its pool is gone, and its claims go with it: nothing to judge by
	}
	if !pool.Spec.Repair.RepairEnabled() {
		r.clearUnhealthy(claim, ReasonRepairDisabled, fmt.Sprintf("Node repair is off for pool %s", claim.Spec.NodePool))
		return 0, nil
	}
	node, err := r.nodeOf(ctx, claim)
	if err != nil {
		return 0, err
	}
	now := r.Clock.Now()
	health := repair.Assess(node, pool.Spec.Repair, now)
	if !health.Unhealthy {
		name := claim.Status.NodeName
		if node != nil {
			name = node.Name
		}
		r.clearUnhealthy(claim, ReasonHealthy, fmt.Sprintf("Node %s is healthy again as pool %s's repair defines it", name, claim.Spec.NodePool))
		if health.Due.IsZero() {
			return 0, nil
		}
		return max(health.Due.Sub(now), time.Millisecond), nil
	}
	message := fmt.Sprintf("Node %s has had %s=%s since %s, longer than the %s pool %s tolerates: node repair replaces it, replacement first, within the pool's limits (at most 20%% of its running nodes at once, at least one; none while more than half are unhealthy)",
		node.Name, health.Condition, health.Status, health.Since.UTC().Format(time.RFC3339), health.Tolerated, claim.Spec.NodePool)
	r.setUnhealthy(claim, metav1.ConditionTrue, health.Reason, message, corev1.EventTypeWarning, ReasonNodeUnhealthy)
	return 0, nil
}

// clearUnhealthy sets the claim's Unhealthy condition False with reason, when it is True.
func (r *Lifecycle) clearUnhealthy(claim *v1beta1.NodeClaim, reason, message string) {
	if !meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionUnhealthy) {
		return
	}
	r.setUnhealthy(claim, metav1.ConditionFalse, reason, message, corev1.EventTypeNormal, ReasonNodeHealthy)
}

// setUnhealthy sets the claim's Unhealthy condition unless it says so already, with an
// Event when its status turns.
func (r *Lifecycle) setUnhealthy(claim *v1beta1.NodeClaim, status metav1.ConditionStatus, reason, message, eventType, eventReason string) {
	c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionUnhealthy)
	if c != nil && c.Status == status && c.Reason == reason && c.Message == message {
		return
	}
	if c == nil || c.Status != status {
		r.Recorder.Eventf(claim, nil, eventType, eventReason, "Repair", "%s", message)
	}
	r.setCondition(claim, v1beta1.ConditionUnhealthy, status, reason, message)
}

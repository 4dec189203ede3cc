// Package repair judges a pool's running nodes as its spec.repair defines health, and
// bounds how many of them may be repaired at once. It is pure: the NodeClaim lifecycle
// controller marks claims Unhealthy by Assess, the disruption controller replaces them
// within Allowed, and the nodepool controller reports an outage by Count and Outage.
package repair

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// ReasonNotReady is the reason of a claim's Unhealthy condition when its Node's Ready
// condition has been False or Unknown for longer than the pool's notReadyAfter. A
// configured condition that made the Node unhealthy gives its own type as the reason.
const ReasonNotReady = "NotReady"

// Health is the verdict on one Node.
type Health struct {
	// Unhealthy is true once a rule of the policy has held for its toleration.
	Unhealthy bool
	// Reason names the rule that made the Node unhealthy: ReasonNotReady, or the type of
	// the configured condition (see ReasonFor). Empty while the Node is healthy.
	Reason string
	// Condition and Status are the Node condition that made it unhealthy and the status
	// it has; Since is when it took that status, Tolerated how long the policy lets it.
	Condition corev1.NodeConditionType
	Status    corev1.ConditionStatus
	Since     time.Time
	Tolerated time.Duration
	// Due is, for a healthy Node, the earliest moment it becomes unhealthy if its
	// conditions stay as they are (zero when none is counting): when to look again.
	Due time.Time
}

// rule is one condition that makes a Node unhealthy once held for after.
type rule struct {
	reason    string
	condition corev1.NodeConditionType
	statuses  []corev1.ConditionStatus
	after     time.Duration
}

// Assess judges node by the pool's repair policy as of now. A Node whose kubelet never
// posted a Ready condition is not judged (the claim's registration and initialization
// timeouts cover it), nor is any Node while repair is disabled. A condition without a
// transition time cannot be timed and does not count. When several rules hold, the one
// that has held unhealthy the longest names the verdict, so that its reason does not
// change while it holds; at equal times Ready comes first, then the pool's list in order.
func Assess(node *corev1.Node, policy v1beta1.Repair, now time.Time) Health {
	if node == nil || !policy.RepairEnabled() || find(node, corev1.NodeReady) == nil {
		return Health{}
	}
	var verdict, pending Health
	for _, r := range rules(policy) {
		c := find(node, r.condition)
		if c == nil || c.LastTransitionTime.IsZero() || !slices.Contains(r.statuses, c.Status) {
			continue
		}
		since := c.LastTransitionTime.Time
		due := since.Add(r.after)
		h := Health{Reason: r.reason, Condition: r.condition, Status: c.Status, Since: since, Tolerated: r.after, Due: due}
		if now.Before(due) {
			if pending.Due.IsZero() || due.Before(pending.Due) {
				pending = h
			}
			continue
		}
		if !verdict.Unhealthy || due.Before(verdict.Due) {
			h.Unhealthy = true
			verdict = h
		}
	}
	if verdict.Unhealthy {
		verdict.Due = time.Time{}
		return verdict
	}
	return Health{Due: pending.Due}
}

// rules lists the policy's rules: Ready False or Unknown for notReadyAfter, then the
// configured conditions. A negative toleration counts as none.
func rules(policy v1beta1.Repair) []rule {
	notReadyAfter, _ := time.ParseDuration(v1beta1.DefaultNotReadyToleration)
	if policy.NotReadyAfter != nil {
		notReadyAfter = policy.NotReadyAfter.Duration
	}
	out := []rule{{reason: ReasonNotReady, condition: corev1.NodeReady,
		statuses: []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionUnknown}, after: max(notReadyAfter, 0)}}
	for _, c := range policy.Conditions {
		out = append(out, rule{reason: ReasonFor(c.Type), condition: corev1.NodeConditionType(c.Type),
			statuses: []corev1.ConditionStatus{corev1.ConditionStatus(c.Status)}, after: max(c.After.Duration, 0)})
	}
	return out
}

// ReasonFor is the reason of a claim's Unhealthy condition for a node condition of type
// conditionType: the type itself when it is a valid condition reason, as node conditions
// usually are (KernelDeadlock), else the type with each character a reason may not hold
// replaced by _ (example.com/disk-full: example_com_disk_full), so that the API server
// takes the claim's status; the condition's message names the type as it is.
func ReasonFor(conditionType string) string {
	out := []byte(conditionType)
	for i, c := range out {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		allowed := letter || c >= '0' && c <= '9' || c == '_' || (c == ',' || c == ':') && i < len(out)-1
		if !allowed {
			out[i] = '_'
		}
	}
	if len(out) == 0 || !(out[0] >= 'a' && out[0] <= 'z' || out[0] >= 'A' && out[0] <= 'Z') {
		return "Condition_" + string(out)
	}
	return string(out)
}

func find(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

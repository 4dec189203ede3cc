package nodeclaim

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodeutil "k8s.io/component-helpers/node/util"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func nodeCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	_, condition := nodeutil.GetNodeCondition(&node.Status, t)
	return condition
}

// notInitialized says why a claim's Node is not initialised yet, or "" when it is: the
// Node is Ready, its network is up and the agents have removed the startup taints.
func notInitialized(node *corev1.Node, claim *v1beta1.NodeClaim) string {
	if ready := nodeCondition(node, corev1.NodeReady); ready == nil || ready.Status != corev1.ConditionTrue {
		return "the Node is not Ready"
	}
	if network := nodeCondition(node, corev1.NodeNetworkUnavailable); network != nil && network.Status == corev1.ConditionTrue {
		return "the Node's network is not ready"
	}
	for _, t := range claim.Spec.StartupTaints {
		if hasTaint(node, t.Core()) {
			return fmt.Sprintf("startup taint %s is still on the Node", t.Key)
		}
	}
	return ""
}

// readySince reports whether the Node has reported Ready since t: a Node that was Ready
// before its instance stopped must report again after the start.
func readySince(node *corev1.Node, t time.Time) bool {
	ready := nodeCondition(node, corev1.NodeReady)
	if ready == nil || ready.Status != corev1.ConditionTrue {
		return false
	}
	since := t.Truncate(time.Second) // condition times are stored to the second
	return !ready.LastTransitionTime.Time.Before(since) || !ready.LastHeartbeatTime.Time.Before(since)
}

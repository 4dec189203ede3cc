package nodeclaim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// nodeChanged passes Node events except updates that only renew the kubelet's heartbeat
// times. Each reconcile of a claim describes its instance, and a kubelet posts its status
// at least every nodeStatusReportFrequency (5 minutes) even when nothing changed: such a
// post tells the claim nothing. What the lifecycle reads of a Node — labels, taints,
// cordon, conditions' status, reasons and transition times (which node repair times),
// capacity — passes.
var nodeChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, okBefore := e.ObjectOld.(*corev1.Node)
		after, okAfter := e.ObjectNew.(*corev1.Node)
		if !okBefore || !okAfter {
			return true
		}
		return !equality.Semantic.DeepEqual(withoutHeartbeat(before), withoutHeartbeat(after))
	},
}

// withoutHeartbeat is a copy of node without what a heartbeat changes.
func withoutHeartbeat(node *corev1.Node) *corev1.Node {
	out := node.DeepCopy()
	out.ResourceVersion = ""
	out.ManagedFields = nil
	for i := range out.Status.Conditions {
		out.Status.Conditions[i].LastHeartbeatTime = metav1.Time{}
	}
	return out
}

package nodeclaim

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestOnlyHeartbeatsDoNotReconcileTheClaim(t *testing.T) {
	beat := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "1", Labels: map[string]string{"a": "b"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(beat)},
		}},
	}
	heartbeat := node.DeepCopy()
	heartbeat.ResourceVersion = "2"
	heartbeat.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(beat.Add(10 * time.Second))
	if nodeChanged.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: heartbeat}) {
		t.Error("a heartbeat alone reconciles the claim")
	}
	for name, change := range map[string]func(*corev1.Node){
		"not ready": func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionUnknown },
		// Node repair judges conditions node-problem-detector adds, and when they turned.
		"a condition added": func(n *corev1.Node) {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: "KernelDeadlock", Status: corev1.ConditionTrue})
		},
		"a transition time": func(n *corev1.Node) { n.Status.Conditions[0].LastTransitionTime = metav1.NewTime(beat) },
		"label":             func(n *corev1.Node) { n.Labels["a"] = "c" },
		"cordon":            func(n *corev1.Node) { n.Spec.Unschedulable = true },
		"taint":             func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}} },
	} {
		changed := heartbeat.DeepCopy()
		change(changed)
		if !nodeChanged.Update(event.UpdateEvent{ObjectOld: node, ObjectNew: changed}) {
			t.Errorf("a heartbeat with a change of %s does not reconcile the claim", name)
		}
	}
}

// A deleted Node wakes its claim: a claim whose instance runs is removed with it.
func TestADeletedNodeReconcilesTheClaim(t *testing.T) {
	if !nodeChanged.Delete(event.DeleteEvent{Object: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}}) {
		t.Error("a Node's deletion does not reconcile its claim")
	}
}

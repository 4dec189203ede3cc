// Package capacitybuffer turns CapacityBuffers into what the scheduling simulation
// places: virtual pods, one per chunk of a buffer, that exist only in the simulation,
// never in the API server. It is pure: the buffer controller resolves a buffer's
// template and replicas into its status; provisioning, the warm pool and disruption
// read them through this package.
package capacitybuffer

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
)

// AnnotationBuffer marks a virtual pod with the namespace/name of its buffer.
const AnnotationBuffer = "stratos.sh/capacity-buffer"

// Strategy is the buffer's provisioning strategy, the API's default when unset.
func Strategy(b *autoscalingv1beta1.CapacityBuffer) string {
	if b.Spec.ProvisioningStrategy != nil && *b.Spec.ProvisioningStrategy != "" {
		return *b.Spec.ProvisioningStrategy
	}
	return autoscalingv1beta1.StrategyActiveCapacity
}

// Served says whether Stratos keeps room for the buffer's strategy.
func Served(b *autoscalingv1beta1.CapacityBuffer) bool {
	s := Strategy(b)
	return s == autoscalingv1beta1.StrategyActiveCapacity || s == autoscalingv1beta1.StrategyStandbyCapacity
}

// Resolved says whether the buffer's status names a template and replicas that the
// simulation may use: ReadyForProvisioning is True.
func Resolved(b *autoscalingv1beta1.CapacityBuffer) bool {
	return b.Status.PodTemplateRef != nil && b.Status.Replicas != nil &&
		meta.IsStatusConditionTrue(b.Status.Conditions, autoscalingv1beta1.ConditionReadyForProvisioning)
}

// IsVirtual says whether a pod is a buffer's virtual pod.
func IsVirtual(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[AnnotationBuffer]
	return ok
}

// VirtualPods are the buffer's chunks as pods of the template: status.replicas of them,
// pending, in the buffer's namespace, with names and UIDs that stay the same from one
// pass to the next. They carry the template's spec as it is (its scheduling
// constraints included), no node name, and the buffer's annotation.
func VirtualPods(b *autoscalingv1beta1.CapacityBuffer, template *corev1.PodTemplate) []*corev1.Pod {
	if b.Status.Replicas == nil || template == nil {
		return nil
	}
	n := int(*b.Status.Replicas)
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		name := fmt.Sprintf("capacitybuffer-%s-%d", b.Name, i)
		labels := map[string]string{}
		for k, v := range template.Template.Labels {
			labels[k] = v
		}
		annotations := map[string]string{AnnotationBuffer: b.Namespace + "/" + b.Name}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: b.Namespace, Labels: labels, Annotations: annotations,
				UID: types.UID(fmt.Sprintf("%s-%d", b.UID, i)),
			},
			Spec:   *template.Template.Spec.DeepCopy(),
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		}
		pod.Spec.NodeName = ""
		pods = append(pods, pod)
	}
	return pods
}

package capacitybuffer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
)

func chunkOf(cpu, memory string) *corev1.PodTemplateSpec {
	requests := corev1.ResourceList{}
	if cpu != "" {
		requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		requests[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "app", Resources: corev1.ResourceRequirements{Requests: requests}},
	}}}
}

func limits(pairs ...string) *autoscalingv1beta1.ResourceList {
	l := autoscalingv1beta1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[autoscalingv1beta1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return &l
}

func TestCountChunks(t *testing.T) {
	for _, tc := range []struct {
		name             string
		spec             autoscalingv1beta1.CapacityBufferSpec
		workloadReplicas int32
		chunk            *corev1.PodTemplateSpec
		replicas         int32
		limited          bool
		unbounded        bool
	}{
		{name: "replicas", spec: autoscalingv1beta1.CapacityBufferSpec{Replicas: ptr.To[int32](3)}, chunk: chunkOf("1", ""), replicas: 3},
		{name: "20% of 10", spec: autoscalingv1beta1.CapacityBufferSpec{Percentage: ptr.To[int32](20)}, workloadReplicas: 10, chunk: chunkOf("1", ""), replicas: 2},
		{name: "20% of 11 rounds up", spec: autoscalingv1beta1.CapacityBufferSpec{Percentage: ptr.To[int32](20)}, workloadReplicas: 11, chunk: chunkOf("1", ""), replicas: 3},
		{name: "1% of 1 is one", spec: autoscalingv1beta1.CapacityBufferSpec{Percentage: ptr.To[int32](1)}, workloadReplicas: 1, chunk: chunkOf("1", ""), replicas: 1},
		{name: "percentage of none", spec: autoscalingv1beta1.CapacityBufferSpec{Percentage: ptr.To[int32](50)}, workloadReplicas: 0, chunk: chunkOf("1", ""), replicas: 0},
		{name: "larger of replicas and percentage", spec: autoscalingv1beta1.CapacityBufferSpec{Replicas: ptr.To[int32](2), Percentage: ptr.To[int32](50)}, workloadReplicas: 10, chunk: chunkOf("1", ""), replicas: 5},
		{name: "replicas larger than percentage", spec: autoscalingv1beta1.CapacityBufferSpec{Replicas: ptr.To[int32](7), Percentage: ptr.To[int32](50)}, workloadReplicas: 10, chunk: chunkOf("1", ""), replicas: 7},
		{name: "limits cut exactly", spec: autoscalingv1beta1.CapacityBufferSpec{Replicas: ptr.To[int32](5), Limits: limits("cpu", "1500m")}, chunk: chunkOf("500m", ""), replicas: 3, limited: true},
		{name: "limits decimal", spec: autoscalingv1beta1.CapacityBufferSpec{Replicas: ptr.To[int32](5), Limits: limits("cpu", "0.3")}, chunk: chunkOf("100m", ""), replicas: 3, limited: true},
		{name: "tightest limit", spec: autoscalingv1beta1.CapacityBufferSpec{Replicas: ptr.To[int32](10), Limits: limits("cpu", "8", "memory", "3Gi")}, chunk: chunkOf("1", "1Gi"), replicas: 3, limited: true},
		{name: "limits above", spec: autoscalingv1beta1.CapacityBufferSpec{Replicas: ptr.To[int32](2), Limits: limits("cpu", "8")}, chunk: chunkOf("1", ""), replicas: 2},
		{name: "limits only", spec: autoscalingv1beta1.CapacityBufferSpec{Limits: limits("cpu", "4")}, chunk: chunkOf("1", ""), replicas: 4},
		{name: "limit on an unrequested resource", spec: autoscalingv1beta1.CapacityBufferSpec{Limits: limits("nvidia.com/gpu", "4")}, chunk: chunkOf("1", ""), unbounded: true},
		{name: "limits too small", spec: autoscalingv1beta1.CapacityBufferSpec{Replicas: ptr.To[int32](2), Limits: limits("cpu", "500m")}, chunk: chunkOf("1", ""), replicas: 0, limited: true},
		{name: "nothing", spec: autoscalingv1beta1.CapacityBufferSpec{}, chunk: chunkOf("1", ""), unbounded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := countChunks(&tc.spec, tc.workloadReplicas, tc.chunk)
			if got.unbounded != tc.unbounded {
				t.Fatalf("unbounded = %v, want %v", got.unbounded, tc.unbounded)
			}
			if tc.unbounded {
				return
			}
			if got.replicas != tc.replicas || (got.limitedBy != "") != tc.limited {
				t.Errorf("got %d chunks, limited by %q; want %d, limited %v", got.replicas, got.limitedBy, tc.replicas, tc.limited)
			}
		})
	}
}

// A chunk's requests count its init containers as the scheduler does: the largest init
// container's request when it exceeds the sum of the app containers'.
func TestChunkRequestsCountInitContainers(t *testing.T) {
	chunk := chunkOf("500m", "")
	chunk.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}
	spec := autoscalingv1beta1.CapacityBufferSpec{Limits: limits("cpu", "4")}
	if got := countChunks(&spec, 0, chunk); got.replicas != 2 {
		t.Errorf("got %d chunks of a pod that needs 2 CPUs to start in 4 CPUs, want 2", got.replicas)
	}
}

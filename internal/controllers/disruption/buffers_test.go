package disruption

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratos-sh/stratos/internal/scheduling"
)

func cpuPod(name, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}}}},
	}
}

func fourCPUNode(name string) scheduling.Node {
	return scheduling.Node{Node: &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110"),
		}},
	}}
}

func TestBufferRoomKeptComparesWithTheRoomThereIs(t *testing.T) {
	in := scheduling.Input{Nodes: []scheduling.Node{fourCPUNode("a"), fourCPUNode("b")}}
	virtual := []*corev1.Pod{cpuPod("v0", "3"), cpuPod("v1", "3")}
	if bufferRoomKept(in, virtual, map[string]bool{"b": true}, nil) {
		t.Error("node b may go, though the buffer's second pod has room only there")
	}
	if !bufferRoomKept(in, virtual[:1], map[string]bool{"b": true}, nil) {
		t.Error("node b may not go, though the buffer's one pod fits on a")
	}
	if bufferRoomKept(in, virtual[:1], map[string]bool{"b": true}, []*corev1.Pod{cpuPod("moving", "2")}) {
		t.Error("node b may go, though its pod would take the buffer's room on a")
	}
	var many []*corev1.Pod
	for i := range 5 {
		many = append(many, cpuPod(fmt.Sprintf("m%d", i), "3"))
	}
	if bufferRoomKept(in, many, map[string]bool{"b": true}, nil) {
		t.Error("node b may go, though two of a buffer's pods that do not all fit have room with it and one without")
	}
	if !bufferRoomKept(in, []*corev1.Pod{cpuPod("huge", "64")}, map[string]bool{"a": true, "b": true}, nil) {
		t.Error("a buffer that fits nowhere holds nodes")
	}
}

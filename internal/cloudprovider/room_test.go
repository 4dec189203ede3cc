package cloudprovider

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// A type whose kubelet keeps back all its CPU or all its memory has an allocatable of
// zero in it; it is never chosen, even for a claim that asks for no room (a standby
// claim), while a type with a little of each left is.
func TestATypeWhoseKubeletKeepsAllItsCPUOrMemoryHasNoRoom(t *testing.T) {
	reserve := func(list corev1.ResourceList) *v1beta1.KubeletConfiguration {
		return &v1beta1.KubeletConfiguration{KubeReserved: list}
	}
	for _, tc := range []struct {
		name     string
		kubelet  *v1beta1.KubeletConfiguration
		requests corev1.ResourceList
		want     bool
	}{
		{"image defaults, no requests", nil, nil, true},
		{"all the CPU kept back, no requests", reserve(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}), nil, false},
		{"more CPU kept back than there is", reserve(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}), nil, false},
		// 8Gi − 8Gi reserved − 100Mi eviction is below zero: none left.
		{"all the memory kept back, no requests", reserve(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")}), nil, false},
		{"memory kept back by system and kube reservations together", &v1beta1.KubeletConfiguration{
			KubeReserved:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
			SystemReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
		}, nil, false},
		{"memory kept back by an eviction threshold above it", &v1beta1.KubeletConfiguration{
			EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "9Gi"},
		}, nil, false},
		{"1m of CPU left", reserve(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1999m")}), nil, true},
		{"1m of CPU left, 2m asked", reserve(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1999m")}),
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2m")}, false},
		{"all the disk kept back, no requests", reserve(corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("20Gi")}), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HasRoomFor(m5Large(), tc.kubelet, tc.requests); got != tc.want {
				t.Fatalf("HasRoomFor = %v, want %v (allocatable %v)", got, tc.want, m5Large().WithKubelet(tc.kubelet).Allocatable())
			}
		})
	}
}

// A capacity that does not list CPU or memory (a test's or a cloud's type that does not
// say) is not judged on it.
func TestLeavesRoomForPodsJudgesOnlyWhatTheCapacityLists(t *testing.T) {
	it := &InstanceType{Name: "pods-only", Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}
	if !it.LeavesRoomForPods() {
		t.Fatal("a type without cpu or memory in its capacity counts as having no room")
	}
}

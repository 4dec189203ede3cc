package fakecloud

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// kubeletConfig is what the test below launch with; on a fake m5.large (2 vCPUs, 8Gi,
// a 20Gi disk; kube-reserved 70m, 574Mi and 1Gi; 100Mi kept free of memory) it makes
// 8 pods and an allocatable of 2000−70−100 = 1830m, 8192−1024−100 = 7068Mi and
// 20−1−2 = 17Gi.
func kubeletConfig() *v1beta1.KubeletConfiguration {
	return &v1beta1.KubeletConfiguration{
		MaxPods:        ptr.To[int32](8),
		KubeReserved:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		SystemReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		EvictionHard:   map[string]v1beta1.EvictionThreshold{"nodefs.available": "10%"},
	}
}

func onlyTypes(names ...string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{
		{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: names},
		{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}},
	}
}

func wantResources(t *testing.T, what string, got corev1.ResourceList, want map[corev1.ResourceName]string) {
	t.Helper()
	for name, q := range want {
		if g := got[name]; g.Cmp(resource.MustParse(q)) != 0 {
			t.Errorf("%s %s = %s, want %s", what, name, g.String(), q)
		}
	}
}

// The remote cloud carries the kubelet configuration to the cloud behind it.
func TestRemoteCarriesTheKubeletConfiguration(t *testing.T) {
	c, _, remote, _ := newRemote(t)
	req := request("remote")
	req.Requirements = onlyTypes("m5.large")
	req.Kubelet = kubeletConfig()
	inst, err := remote.Create(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	v := view(t, c, inst.ID)
	wantResources(t, "capacity", v.InstanceType.Capacity, map[corev1.ResourceName]string{"pods": "8"})
	wantResources(t, "allocatable", v.InstanceType.Allocatable(), map[corev1.ResourceName]string{"cpu": "1830m", "memory": "7068Mi", "ephemeral-storage": "17Gi"})
}

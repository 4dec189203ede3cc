package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// kubeletConfig is what the tests below launch with; on a fake m5.large (2 vCPUs, 8Gi,
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

// The kubelet of an instance reports the capacity and allocatable its launch's kubelet
// configuration makes; another instance of the type keeps the image's defaults.
func TestKubeletReportsItsConfiguration(t *testing.T) {
	c, _ := newCloud(t, fakecloud.Options{})
	configured := request("configured")
	configured.Requirements = onlyTypes("m5.large")
	configured.Kubelet = kubeletConfig()
	plain := request("plain")
	plain.Requirements = onlyTypes("m5.large")
	k := NewKubelet(c, nil, KubeletOptions{})

	configuredID := create(t, c, configured).ID
	var status corev1.NodeStatus
	k.setStatus(&status, view(t, c, configuredID), epoch)
	wantResources(t, "configured capacity", status.Capacity, map[corev1.ResourceName]string{"cpu": "2", "memory": "8Gi", "pods": "8", "ephemeral-storage": "20Gi"})
	wantResources(t, "configured allocatable", status.Allocatable, map[corev1.ResourceName]string{"cpu": "1830m", "memory": "7068Mi", "pods": "8", "ephemeral-storage": "17Gi"})

	status = corev1.NodeStatus{}
	k.setStatus(&status, view(t, c, create(t, c, plain).ID), epoch)
	// 2000−70 m, 8192−574−100 Mi, 20−1 Gi.
	wantResources(t, "default capacity", status.Capacity, map[corev1.ResourceName]string{"pods": "29"})
	wantResources(t, "default allocatable", status.Allocatable, map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "19Gi"})

	// The instance keeps its own copy of the configuration.
	*configured.Kubelet.MaxPods = 100
	status = corev1.NodeStatus{}
	k.setStatus(&status, view(t, c, configuredID), epoch)
	wantResources(t, "capacity after the request changed", status.Capacity, map[corev1.ResourceName]string{"pods": "8"})
}

// A launch chooses among the types whose allocatable, under the request's kubelet
// configuration, holds the requests: 7100Mi fits an m5.large's default 7518Mi, not the
// 7068Mi a 1Gi kube-reserved leaves, so the dearer m5.xlarge launches.
func TestCreateFitsUnderTheKubeletConfiguration(t *testing.T) {
	for _, tt := range []struct {
		name    string
		kubelet *v1beta1.KubeletConfiguration
		want    string
	}{
		{"image defaults", nil, "m5.large"},
		{"kube-reserved memory", kubeletConfig(), "m5.xlarge"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCloud(t, fakecloud.Options{})
			req := request("a")
			req.Requirements = onlyTypes("m5.large", "m5.xlarge")
			req.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("7100Mi")}
			req.Kubelet = tt.kubelet
			if inst := create(t, c, req); inst.Type != tt.want {
				t.Fatalf("launched %s, want %s", inst.Type, tt.want)
			}
		})
	}
}

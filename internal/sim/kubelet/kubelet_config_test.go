package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

// The kubelet of an instance reports the capacity and allocatable its launch's kubelet
// configuration makes; another instance of the type keeps the image's defaults.
func TestKubeletReportsItsConfiguration(t *testing.T) {
	c, _ := newCloud(t, fakecloud.Options{})
	configured := request("configured")
	configured.Requirements = simtest.OnlyTypes("m5.large")
	configured.Kubelet = simtest.KubeletConfig()
	plain := request("plain")
	plain.Requirements = simtest.OnlyTypes("m5.large")
	k := NewKubelet(c, nil, KubeletOptions{})

	configuredID := create(t, c, configured).ID
	var status corev1.NodeStatus
	k.setStatus(&status, view(t, c, configuredID), simtest.Epoch)
	simtest.WantResources(t, "configured capacity", status.Capacity, map[corev1.ResourceName]string{"cpu": "2", "memory": "8Gi", "pods": "8", "ephemeral-storage": "20Gi"})
	simtest.WantResources(t, "configured allocatable", status.Allocatable, map[corev1.ResourceName]string{"cpu": "1830m", "memory": "7068Mi", "pods": "8", "ephemeral-storage": "17Gi"})

	status = corev1.NodeStatus{}
	k.setStatus(&status, view(t, c, create(t, c, plain).ID), simtest.Epoch)
	// 2000−70 m, 8192−574−100 Mi, 20−1 Gi.
	simtest.WantResources(t, "default capacity", status.Capacity, map[corev1.ResourceName]string{"pods": "29"})
	simtest.WantResources(t, "default allocatable", status.Allocatable, map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "19Gi"})

	// The instance keeps its own copy of the configuration.
	*configured.Kubelet.MaxPods = 100
	status = corev1.NodeStatus{}
	k.setStatus(&status, view(t, c, configuredID), simtest.Epoch)
	simtest.WantResources(t, "capacity after the request changed", status.Capacity, map[corev1.ResourceName]string{"pods": "8"})
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
		{"kube-reserved memory", simtest.KubeletConfig(), "m5.xlarge"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCloud(t, fakecloud.Options{})
			req := request("a")
			req.Requirements = simtest.OnlyTypes("m5.large", "m5.xlarge")
			req.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("7100Mi")}
			req.Kubelet = tt.kubelet
			if inst := create(t, c, req); inst.Type != tt.want {
				t.Fatalf("launched %s, want %s", inst.Type, tt.want)
			}
		})
	}
}

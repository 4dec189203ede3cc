package fakecloud

import (
	"context"
	"testing"

	"github.com/stratos-sh/stratos/internal/sim/simtest"
	corev1 "k8s.io/api/core/v1"
)

// The remote cloud carries the kubelet configuration to the cloud behind it.
func TestRemoteCarriesTheKubeletConfiguration(t *testing.T) {
	c, _, remote, _ := newRemote(t)
	req := request("remote")
	req.Requirements = simtest.OnlyTypes("m5.large")
	req.Kubelet = simtest.KubeletConfig()
	inst, err := remote.Create(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	v := view(t, c, inst.ID)
	simtest.WantResources(t, "capacity", v.InstanceType.Capacity, map[corev1.ResourceName]string{"pods": "8"})
	simtest.WantResources(t, "allocatable", v.InstanceType.Allocatable(), map[corev1.ResourceName]string{"cpu": "1830m", "memory": "7068Mi", "ephemeral-storage": "17Gi"})
}

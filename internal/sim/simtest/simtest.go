// Package simtest holds what the tests of the simulator's fake cloud and kubelet
// simulator share: a fixed epoch, physics without jitter, a kubelet configuration with
// hand-checked figures, a poll, and a manager run for the length of a test. It imports
// neither package, so that the fake cloud's own tests can use it.
package simtest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// Epoch is where the tests' fake clocks start.
var Epoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// NoJitter is the default physics without jitter, so that tests can step to exact times.
func NoJitter() physics.Physics {
	p := physics.DefaultPhysics()
	p.JitterPercent = 0
	return p
}

// KubeletConfig is what the kubelet-configuration tests launch with; on a fake m5.large
// (2 vCPUs, 8Gi, a 20Gi disk; kube-reserved 70m, 574Mi and 1Gi; 100Mi kept free of
// memory) it makes 8 pods and an allocatable of 2000−70−100 = 1830m,
// 8192−1024−100 = 7068Mi and 20−1−2 = 17Gi.
func KubeletConfig() *v1beta1.KubeletConfiguration {
	return &v1beta1.KubeletConfiguration{
		MaxPods:        ptr.To[int32](8),
		KubeReserved:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		SystemReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		EvictionHard:   map[string]v1beta1.EvictionThreshold{"nodefs.available": "10%"},
	}
}

// OnlyTypes are requirements for on-demand instances of the named types.
func OnlyTypes(names ...string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{
		{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: names},
		{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}},
	}
}

// WantResources fails t for each resource of want that got does not equal.
func WantResources(t *testing.T, what string, got corev1.ResourceList, want map[corev1.ResourceName]string) {
	t.Helper()
	for name, q := range want {
		if g := got[name]; g.Cmp(resource.MustParse(q)) != 0 {
			t.Errorf("%s %s = %s, want %s", what, name, g.String(), q)
		}
	}
}

// EventuallyWithin polls cond every 20 ms for up to timeout, and fails t if it never holds.
func EventuallyWithin(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

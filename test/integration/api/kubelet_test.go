package api_test

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kubelet configurations a pool's template and a claim accept.
var validKubelets = []struct{ name, kubelet string }{
	{"max pods only", `{maxPods: 8}`},
	{"max pods at the bounds", `{maxPods: 1000}`},
	{"every reservation", `{kubeReserved: {cpu: 100m, memory: 1Gi, ephemeral-storage: 2Gi, pid: "1000"}, systemReserved: {cpu: "1", memory: 512Mi}}`},
	{"every hard signal", `{evictionHard: {memory.available: 200Mi, nodefs.available: "10%", nodefs.inodesFree: "5%", imagefs.available: "15.5%", imagefs.inodesFree: "5%", pid.available: "100%"}}`},
	{"soft thresholds with their grace periods", `{evictionSoft: {memory.available: 1Gi, nodefs.available: "20%"}, evictionSoftGracePeriod: {memory.available: 1m30s, nodefs.available: 2m}}`},
	{"image GC thresholds", `{imageGCHighThresholdPercent: 90, imageGCLowThresholdPercent: 80}`},
	{"image GC thresholds alone", `{imageGCLowThresholdPercent: 0}`},
	{"zero reservations", `{kubeReserved: {cpu: "0", pid: 0}, systemReserved: {memory: 0Mi}}`},
	{"empty", `{}`},
}

// Kubelet configurations refused, each with the message the user reads.
var invalidKubelets = []struct{ name, kubelet, want string }{
	{"max pods of 0", `{maxPods: 0}`, `should be greater than or equal to 1`},
	{"max pods above 1000", `{maxPods: 1001}`, `should be less than or equal to 1000`},
	{"kube-reserved GPUs", `{kubeReserved: {nvidia.com/gpu: "1"}}`, `kubeReserved takes cpu, memory, ephemeral-storage and pid`},
	{"system-reserved pods", `{systemReserved: {pods: "2"}}`, `systemReserved takes cpu, memory, ephemeral-storage and pid`},
	{"negative kube-reserved memory", `{kubeReserved: {memory: -1Gi}}`, `kubeReserved quantities must not be negative: the kubelet refuses to start with them`},
	{"negative kube-reserved pids as a number", `{kubeReserved: {pid: -5}}`, `kubeReserved quantities must not be negative`},
	{"negative system-reserved cpu", `{systemReserved: {cpu: -100m}}`, `systemReserved quantities must not be negative: the kubelet refuses to start with them`},
	{"negative system-reserved ephemeral storage", `{systemReserved: {ephemeral-storage: -1e9}}`, `systemReserved quantities must not be negative`},
	{"unknown hard eviction signal", `{evictionHard: {memory.free: 100Mi}}`, `eviction signals are memory.available, nodefs.available`},
	{"unknown soft eviction signal", `{evictionSoft: {cpu.available: "5%"}, evictionSoftGracePeriod: {cpu.available: 1m}}`, `eviction signals are memory.available, nodefs.available`},
	{"threshold in words", `{evictionHard: {memory.available: lots}}`, `eviction thresholds are positive quantities such as 100Mi or percentages`},
	{"percentage above 100", `{evictionHard: {nodefs.available: "150%"}}`, `eviction thresholds are positive quantities such as 100Mi or percentages`},
	{"negative threshold", `{evictionHard: {memory.available: -100Mi}}`, `eviction thresholds are positive quantities such as 100Mi or percentages`},
	{"zero threshold", `{evictionHard: {memory.available: "0"}}`, `eviction thresholds are positive quantities such as 100Mi or percentages`},
	{"soft without a grace period", `{evictionSoft: {memory.available: 1Gi}}`, `every evictionSoft signal needs an evictionSoftGracePeriod`},
	{"soft with another signal's grace period", `{evictionSoft: {memory.available: 1Gi, nodefs.available: "20%"}, evictionSoftGracePeriod: {memory.available: 1m}}`, `every evictionSoft signal needs an evictionSoftGracePeriod`},
	{"grace period without soft", `{evictionSoftGracePeriod: {memory.available: 1m}}`, `every evictionSoftGracePeriod signal needs an evictionSoft threshold`},
	{"grace period in words", `{evictionSoft: {memory.available: 1Gi}, evictionSoftGracePeriod: {memory.available: soon}}`, `must be a duration such as 30s, 10m or 1h30m`},
	{"image GC low equal to high", `{imageGCHighThresholdPercent: 80, imageGCLowThresholdPercent: 80}`, `imageGCLowThresholdPercent must be below imageGCHighThresholdPercent`},
	{"image GC low above high", `{imageGCHighThresholdPercent: 70, imageGCLowThresholdPercent: 90}`, `imageGCLowThresholdPercent must be below imageGCHighThresholdPercent`},
	{"image GC high of 0", `{imageGCHighThresholdPercent: 0}`, `should be greater than or equal to 1`},
	{"image GC low of 100", `{imageGCLowThresholdPercent: 100}`, `should be less than or equal to 99`},
}

// kubeletPlaces are where a kubelet configuration goes: a pool's template and a claim.
var kubeletPlaces = []struct{ name, base, patch string }{
	{"pool", basePool, `spec: {template: {spec: {kubelet: %s}}}`},
	{"claim", baseClaim, `spec: {kubelet: %s}`},
}

func TestKubeletConfigurationsAreValidated(t *testing.T) {
	for _, place := range kubeletPlaces {
		for i, tc := range validKubelets {
			t.Run(place.name+"/valid/"+tc.name, func(t *testing.T) {
				ctx := testContext(t)
				obj := patched(t, place.base, fmt.Sprintf(place.patch, tc.kubelet), fmt.Sprintf("kubelet-valid-%d", i))
				if err := env.Client.Create(ctx, obj); err != nil {
					t.Fatalf("the API server refused %s: %v", tc.kubelet, err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			})
		}
		for i, tc := range invalidKubelets {
			t.Run(place.name+"/invalid/"+tc.name, func(t *testing.T) {
				ctx := testContext(t)
				obj := patched(t, place.base, fmt.Sprintf(place.patch, tc.kubelet), fmt.Sprintf("kubelet-invalid-%d", i))
				err := env.Client.Create(ctx, obj)
				if err == nil {
					_ = env.Client.Delete(ctx, obj)
					t.Fatalf("the API server accepted %s", tc.kubelet)
				}
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("want a validation error saying %q, got:\n%v", tc.want, err)
				}
			})
		}
	}
}

// A claim's kubelet configuration is what its node booted with: it cannot change, nor
// be added or removed; a pool's may change (and drifts its nodes).
func TestAClaimsKubeletConfigurationIsImmutable(t *testing.T) {
	for i, tc := range []struct {
		name, kubelet, patch, want string
	}{
		{"changed", `{maxPods: 8}`, `{"spec":{"kubelet":{"maxPods":9}}}`, `kubelet is immutable`},
		{"added", `null`, `{"spec":{"kubelet":{"maxPods":9}}}`, `only desiredState may change after a claim is created`},
		{"removed", `{maxPods: 8}`, `{"spec":{"kubelet":null}}`, `only desiredState may change after a claim is created`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			obj := patched(t, baseClaim, fmt.Sprintf(`spec: {kubelet: %s}`, tc.kubelet), fmt.Sprintf("kubelet-immutable-%d", i))
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			err := env.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(tc.patch)))
			if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want a validation error saying %q, got: %v", tc.want, err)
			}
		})
	}
	t.Run("a pool's may change", func(t *testing.T) {
		ctx := testContext(t)
		obj := patched(t, basePool, `spec: {template: {spec: {kubelet: {maxPods: 8}}}}`, "kubelet-pool-change")
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"template":{"kubelet":{"maxPods":20,"kubeReserved":{"memory":"1Gi"}}}}}`))
		if err := env.Client.Patch(ctx, obj, patch); err != nil {
			t.Fatalf("changing a pool's kubelet configuration must be allowed: %v", err)
		}
	})
}

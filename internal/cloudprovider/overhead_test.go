package cloudprovider

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// EKS's kube-reserved CPU for common vCPU counts, as AWS documents the bands: 6% of the
// first core, 1% of the second, 0.5% of the next two, 0.25% above four.
func TestKubeReservedCPU(t *testing.T) {
	for vcpus, want := range map[int64]string{1: "60m", 2: "70m", 4: "80m", 8: "90m", 16: "110m", 32: "150m", 48: "190m", 96: "310m"} {
		if got := kubeReservedCPU(vcpus); got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("%d vCPUs: kube-reserved cpu = %s, want %s", vcpus, got, want)
		}
	}
}

// EKS's kube-reserved memory: 255 MiB and 11 MiB per pod. m5.large (29 pods) reserves
// 574Mi, m5.xlarge (58) 893Mi, a 110-pod node 1465Mi.
func TestKubeReservedMemory(t *testing.T) {
	for pods, want := range map[int64]string{29: "574Mi", 58: "893Mi", 110: "1465Mi", 234: "2829Mi", 737: "8362Mi"} {
		if got := kubeReservedMemory(pods); got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("%d pods: kube-reserved memory = %s, want %s", pods, got, want)
		}
	}
}

// An m5.large node with 20Gi of ephemeral storage keeps back 70m CPU, 674Mi of memory
// (574Mi kube-reserved and the 100Mi eviction threshold) and 3Gi of storage (1Gi
// kube-reserved and the 10% eviction threshold), and nothing for the system.
func TestEstimatedOverhead(t *testing.T) {
	got := EstimatedOverhead(2, 29, resource.MustParse("20Gi"))
	parts := []struct {
		part string
		got  corev1.ResourceList
		want map[corev1.ResourceName]string
	}{
		{"kube-reserved", got.KubeReserved, map[corev1.ResourceName]string{corev1.ResourceCPU: "70m", corev1.ResourceMemory: "574Mi", corev1.ResourceEphemeralStorage: "1Gi"}},
		{"eviction threshold", got.EvictionThreshold, map[corev1.ResourceName]string{corev1.ResourceMemory: "100Mi", corev1.ResourceEphemeralStorage: "2Gi"}},
		{"system-reserved", got.SystemReserved, nil},
		{"total", got.Total(), map[corev1.ResourceName]string{corev1.ResourceCPU: "70m", corev1.ResourceMemory: "674Mi", corev1.ResourceEphemeralStorage: "3Gi"}},
	}
	for _, p := range parts {
		if len(p.got) != len(p.want) {
			t.Errorf("%s = %v, want %v", p.part, p.got, p.want)
		}
		for name, want := range p.want {
			if q := p.got[name]; q.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s %s = %s, want %s", p.part, name, q.String(), want)
			}
		}
	}
}

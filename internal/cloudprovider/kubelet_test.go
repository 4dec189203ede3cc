package cloudprovider

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// m5Large is an m5.large as EKS's AL2023 image configures its kubelet by default, the
// figures set by hand: 2 vCPUs, 8Gi, 29 pods, a 20Gi root volume; kube-reserved 70m,
// 574Mi (255Mi + 11Mi × 29 pods) and 1Gi; eviction at 100Mi of memory and 10% (2Gi) of
// the root volume. Its default allocatable is 1930m, 7518Mi, 29 pods and 17Gi.
func m5Large() *InstanceType {
	return &InstanceType{
		Name: "m5.large",
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse("2"),
			corev1.ResourceMemory:           resource.MustParse("8Gi"),
			corev1.ResourcePods:             resource.MustParse("29"),
			corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
		},
		Overhead: Overhead{
			KubeReserved: corev1.ResourceList{
				corev1.ResourceCPU:              resource.MustParse("70m"),
				corev1.ResourceMemory:           resource.MustParse("574Mi"),
				corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
			},
			EvictionThreshold: corev1.ResourceList{
				corev1.ResourceMemory:           resource.MustParse("100Mi"),
				corev1.ResourceEphemeralStorage: resource.MustParse("2Gi"),
			},
		},
	}
}

func TestWithKubeletAllocatable(t *testing.T) {
	cases := []struct {
		name    string
		kubelet *v1beta1.KubeletConfiguration
		// want is the allocatable; pods is the pods capacity (equal to allocatable pods).
		want map[corev1.ResourceName]string
	}{
		{"image defaults", nil,
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		{"empty configuration", &v1beta1.KubeletConfiguration{},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// Kube-reserved memory stays that of the image's 29 pods, as nodeadm computes it.
		{"maxPods", &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](8)},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "8", "ephemeral-storage": "17Gi"}},
		{"maxPods above the default", &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](110)},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "110", "ephemeral-storage": "17Gi"}},
		// 8192 − 1024 − 100; CPU and storage keep the defaults.
		{"kubeReserved memory replaces the default", &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{"memory": resource.MustParse("1Gi")}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7068Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// 2000 − 70 − 100 millicores; 8192 − 574 − 100 − 256 MiB.
		{"systemReserved adds", &v1beta1.KubeletConfiguration{SystemReserved: corev1.ResourceList{"cpu": resource.MustParse("100m"), "memory": resource.MustParse("256Mi")}},
			map[corev1.ResourceName]string{"cpu": "1830m", "memory": "7262Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// A pid reservation limits processes, which no pod requests.
		{"pid reservations change nothing allocatable", &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{"pid": resource.MustParse("1000")}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// 8192 − 574 − 500.
		{"evictionHard quantity replaces the default", &v1beta1.KubeletConfiguration{EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "500Mi"}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7118Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// 10% of 8Gi is 858993459.2 bytes, rounded down: 8589934592 − 601882624 (574Mi) − 858993459.
		{"evictionHard memory percentage", &v1beta1.KubeletConfiguration{EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "10%"}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7129058509", "pods": "29", "ephemeral-storage": "17Gi"}},
		// 15% of 20Gi is 3Gi: 20 − 1 − 3. Memory keeps its default threshold.
		{"evictionHard nodefs percentage", &v1beta1.KubeletConfiguration{EvictionHard: map[string]v1beta1.EvictionThreshold{"nodefs.available": "15%"}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "16Gi"}},
		// 2.5% of 20Gi is 512Mi: 20480 − 1024 − 512 MiB.
		{"fractional percentage", &v1beta1.KubeletConfiguration{EvictionHard: map[string]v1beta1.EvictionThreshold{"nodefs.available": "2.5%"}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "18944Mi"}},
		// The kubelet ignores a 0% threshold: nothing is kept free. 8192 − 574.
		{"0% keeps nothing free", &v1beta1.KubeletConfiguration{EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "0%"}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7618Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// Signals that measure nothing a pod requests.
		{"other signals change nothing", &v1beta1.KubeletConfiguration{EvictionHard: map[string]v1beta1.EvictionThreshold{"imagefs.available": "50%", "nodefs.inodesFree": "20%", "pid.available": "10%"}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// Soft 1Gi over hard 100Mi: 8192 − 574 − 1024.
		{"soft above hard counts", &v1beta1.KubeletConfiguration{
			EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "100Mi"},
			EvictionSoft: map[string]v1beta1.EvictionThreshold{"memory.available": "1Gi"}, EvictionSoftGracePeriod: map[string]v1beta1.Duration{"memory.available": {Duration: time.Minute}}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "6594Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// Soft 200Mi under hard 500Mi: 8192 − 574 − 500.
		{"soft below hard does not", &v1beta1.KubeletConfiguration{
			EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "500Mi"},
			EvictionSoft: map[string]v1beta1.EvictionThreshold{"memory.available": "200Mi"}, EvictionSoftGracePeriod: map[string]v1beta1.Duration{"memory.available": {Duration: time.Minute}}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7118Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// Soft 25% of 20Gi (5Gi) over the default hard 2Gi: 20 − 1 − 5; soft 50Mi of
		// memory under the default 100Mi leaves memory as it is.
		{"soft against the default hard", &v1beta1.KubeletConfiguration{
			EvictionSoft:            map[string]v1beta1.EvictionThreshold{"nodefs.available": "25%", "memory.available": "50Mi"},
			EvictionSoftGracePeriod: map[string]v1beta1.Duration{"nodefs.available": {Duration: time.Minute}, "memory.available": {Duration: time.Minute}}},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "14Gi"}},
		{"image GC thresholds change nothing", &v1beta1.KubeletConfiguration{ImageGCHighThresholdPercent: ptr.To[int32](95), ImageGCLowThresholdPercent: ptr.To[int32](90)},
			map[corev1.ResourceName]string{"cpu": "1930m", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		// More reserved than there is leaves none, not less than none.
		{"reservations beyond the capacity", &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{"cpu": resource.MustParse("3")}},
			map[corev1.ResourceName]string{"cpu": "0", "memory": "7518Mi", "pods": "29", "ephemeral-storage": "17Gi"}},
		{"everything at once", &v1beta1.KubeletConfiguration{
			MaxPods:        ptr.To[int32](8),
			KubeReserved:   corev1.ResourceList{"cpu": resource.MustParse("200m"), "memory": resource.MustParse("1Gi")},
			SystemReserved: corev1.ResourceList{"memory": resource.MustParse("512Mi"), "ephemeral-storage": resource.MustParse("3Gi")},
			EvictionHard:   map[string]v1beta1.EvictionThreshold{"memory.available": "200Mi", "nodefs.available": "10%"},
		},
			// 2000 − 200; 8192 − 1024 − 512 − 200; 20 − 1 − 3 − 2.
			map[corev1.ResourceName]string{"cpu": "1800m", "memory": "6456Mi", "pods": "8", "ephemeral-storage": "14Gi"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			original := m5Large()
			shaped := original.WithKubelet(c.kubelet)
			got := shaped.Allocatable()
			if len(got) != len(c.want) {
				t.Errorf("allocatable %v has other resources than %v", got, c.want)
			}
			for name, want := range c.want {
				if q := got[name]; q.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("allocatable %s = %s, want %s", name, q.String(), want)
				}
			}
			if pods := shaped.Capacity[corev1.ResourcePods]; pods.Cmp(resource.MustParse(c.want["pods"])) != 0 {
				t.Errorf("pods capacity %s, want %s", pods.String(), c.want["pods"])
			}
			for _, name := range []corev1.ResourceName{"cpu", "memory", "ephemeral-storage"} {
				if got, want := shaped.Capacity[name], original.Capacity[name]; got.Cmp(want) != 0 {
					t.Errorf("capacity %s changed from %s to %s", name, want.String(), got.String())
				}
			}
		})
	}
}

// WithKubelet computes from the type and leaves it as it was.
func TestWithKubeletLeavesTheTypeAlone(t *testing.T) {
	it := m5Large()
	if it.WithKubelet(nil) != it {
		t.Error("no configuration must give the type itself")
	}
	shaped := it.WithKubelet(&v1beta1.KubeletConfiguration{
		MaxPods:        ptr.To[int32](8),
		KubeReserved:   corev1.ResourceList{"memory": resource.MustParse("1Gi")},
		SystemReserved: corev1.ResourceList{"cpu": resource.MustParse("1")},
		EvictionHard:   map[string]v1beta1.EvictionThreshold{"memory.available": "1Gi"},
	})
	shaped.Capacity[corev1.ResourceCPU] = resource.MustParse("64")
	fresh := m5Large()
	for _, pair := range []struct {
		part      string
		got, want corev1.ResourceList
	}{
		{"capacity", it.Capacity, fresh.Capacity},
		{"kube-reserved", it.Overhead.KubeReserved, fresh.Overhead.KubeReserved},
		{"system-reserved", it.Overhead.SystemReserved, fresh.Overhead.SystemReserved},
		{"eviction threshold", it.Overhead.EvictionThreshold, fresh.Overhead.EvictionThreshold},
	} {
		if len(pair.got) != len(pair.want) {
			t.Errorf("%s changed: %v, was %v", pair.part, pair.got, pair.want)
		}
		for name, want := range pair.want {
			if got := pair.got[name]; got.Cmp(want) != 0 {
				t.Errorf("%s %s changed: %s, was %s", pair.part, name, got.String(), want.String())
			}
		}
	}
}

// Allocatable subtracts each part of the overhead, and lists the resources of the
// capacity only.
func TestAllocatableSubtractsEveryPart(t *testing.T) {
	it := &InstanceType{
		Capacity: corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi")},
		Overhead: Overhead{
			KubeReserved:      corev1.ResourceList{"cpu": resource.MustParse("80m"), "memory": resource.MustParse("1Gi")},
			SystemReserved:    corev1.ResourceList{"cpu": resource.MustParse("20m"), "pid": resource.MustParse("100")},
			EvictionThreshold: corev1.ResourceList{"memory": resource.MustParse("1Gi")},
		},
	}
	got := it.Allocatable()
	want := corev1.ResourceList{"cpu": resource.MustParse("3900m"), "memory": resource.MustParse("14Gi")}
	if len(got) != len(want) {
		t.Fatalf("allocatable %v, want %v", got, want)
	}
	for name, q := range want {
		if g := got[name]; g.Cmp(q) != 0 {
			t.Errorf("allocatable %s = %s, want %s", name, g.String(), q.String())
		}
	}
}

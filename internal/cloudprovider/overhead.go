package cloudprovider

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The kubelet's reservations as EKS's images (AL2023's nodeadm) configure them. Clouds
// that do not know the kubelet configuration of their images (Cluster API, where the
// bootstrap provider writes it) estimate with the same figures: they are larger than a
// bare kubelet's defaults, so a node has room to spare rather than pods that do not fit.
// docs/aws.md explains each figure.
const (
	// kubeReservedMemoryBaseMiB and kubeReservedMemoryPerPodMiB: kube-reserved memory is
	// 255 MiB plus 11 MiB for each pod the node may run.
	kubeReservedMemoryBaseMiB   = 255
	kubeReservedMemoryPerPodMiB = 11
	// evictionHardMemoryMiB is the kubelet's memory.available<100Mi hard eviction
	// threshold: allocatable memory leaves it free.
	evictionHardMemoryMiB = 100
	// evictionHardNodefsPercent is the nodefs.available<10% hard eviction threshold.
	evictionHardNodefsPercent = 10
)

// kubeReservedEphemeralStorage is nodeadm's kube-reserved ephemeral storage.
var kubeReservedEphemeralStorage = resource.MustParse("1Gi")

// EstimatedOverhead is what the kubelet keeps back on a node of vcpus running pods pods
// with ephemeral storage: kube-reserved, no system-reserved (as on EKS's images), and the
// hard eviction thresholds of memory and the root volume.
func EstimatedOverhead(vcpus, pods int64, ephemeral resource.Quantity) Overhead {
	return Overhead{
		KubeReserved: corev1.ResourceList{
			corev1.ResourceCPU:              *kubeReservedCPU(vcpus),
			corev1.ResourceMemory:           *kubeReservedMemory(pods),
			corev1.ResourceEphemeralStorage: kubeReservedEphemeralStorage.DeepCopy(),
		},
		EvictionThreshold: corev1.ResourceList{
			corev1.ResourceMemory:           *resource.NewQuantity(evictionHardMemoryMiB<<20, resource.BinarySI),
			corev1.ResourceEphemeralStorage: *resource.NewQuantity(ephemeral.Value()*evictionHardNodefsPercent/100, resource.BinarySI),
		},
	}
}

// kubeReservedCPU is nodeadm's kube-reserved CPU for a node of vcpus: 6% of the first
// core, 1% of the second, 0.5% of the third and fourth and 0.25% of every core above.
func kubeReservedCPU(vcpus int64) *resource.Quantity {
	bands := []struct {
		cores     int64 // cores in the band; 0 for every core left
		permyriad int64 // share of each core in the band, in 1/10000
	}{{1, 600}, {1, 100}, {2, 50}, {0, 25}}
	var millis float64
	left := vcpus
	for _, band := range bands {
		cores := left
		if band.cores > 0 {
			cores = min(left, band.cores)
		}
		millis += float64(cores*1000*band.permyriad) / 10000
		left -= cores
	}
	return resource.NewMilliQuantity(int64(math.Round(millis)), resource.DecimalSI)
}

// kubeReservedMemory is nodeadm's kube-reserved memory for a node that runs pods pods.
func kubeReservedMemory(pods int64) *resource.Quantity {
	return resource.NewQuantity((kubeReservedMemoryBaseMiB+kubeReservedMemoryPerPodMiB*pods)<<20, resource.BinarySI)
}

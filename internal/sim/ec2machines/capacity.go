package ec2machines

import (
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// rootVolume is the ephemeral storage a node reports: the EKS images' default root
// volume of 20 GiB. The emulator keeps no volume sizes worth reading.
var rootVolume = resource.MustParse("20Gi")

// machineShape returns what the kubelet of an instance of the type reports with the
// image's defaults, as EC2 describes the type: vCPUs, memory, the pods the VPC CNI gives
// addresses to, and what nodeadm reserves for the system. It plays the part of nodeadm
// on a real node and so shares no code with the operator's catalogue, whose figures it
// checks. configured applies a node's kubelet configuration to it.
func machineShape(info ec2types.InstanceTypeInfo) (*cloudprovider.InstanceType, error) {
	name := string(info.InstanceType)
	if info.VCpuInfo == nil || info.VCpuInfo.DefaultVCpus == nil || info.MemoryInfo == nil || info.MemoryInfo.SizeInMiB == nil {
		return nil, fmt.Errorf("instance type %s: EC2 describes no vCPUs or memory", name)
	}
	pods, err := maxPods(info)
	if err != nil {
		return nil, fmt.Errorf("instance type %s: %w", name, err)
	}
	cpus := int64(*info.VCpuInfo.DefaultVCpus)
	arch := "amd64"
	if info.ProcessorInfo != nil && slices.Contains(info.ProcessorInfo.SupportedArchitectures, ec2types.ArchitectureTypeArm64) {
		arch = "arm64"
	}
	return configured(&cloudprovider.InstanceType{
		Name:         name,
		Architecture: arch,
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU:              *resource.NewQuantity(cpus, resource.DecimalSI),
			corev1.ResourceMemory:           *resource.NewQuantity(*info.MemoryInfo.SizeInMiB<<20, resource.BinarySI),
			corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
			corev1.ResourceEphemeralStorage: rootVolume,
		},
	}, KubeletSettings{}), nil
}

// maxPods is the VPC CNI's limit without prefix delegation: each network interface of
// the default network card (the only one the CNI attaches to) gives its addresses but
// its primary one to pods, plus two for the host-network pods (kube-proxy, the CNI).
func maxPods(info ec2types.InstanceTypeInfo) (int64, error) {
	n := info.NetworkInfo
	if n == nil || n.MaximumNetworkInterfaces == nil || n.Ipv4AddressesPerInterface == nil {
		return 0, fmt.Errorf("EC2 describes no network interface limits")
	}
	interfaces := *n.MaximumNetworkInterfaces
	for _, card := range n.NetworkCards {
		if aws.ToInt32(card.NetworkCardIndex) == aws.ToInt32(n.DefaultNetworkCardIndex) && card.MaximumNetworkInterfaces != nil {
			interfaces = *card.MaximumNetworkInterfaces
		}
	}
	return int64(interfaces)*(int64(*n.Ipv4AddressesPerInterface)-1) + 2, nil
}

// configured is what the kubelet of a node of the type (with the image's defaults)
// reports under a kubelet configuration: pods capacity maxPods when set; overhead
// kube-reserved (the image's default for each resource the configuration does not
// reserve) plus system-reserved plus the eviction thresholds of memory.available and
// nodefs.available (the image's default for a signal the configuration does not set, a
// soft threshold where it is larger than the hard one). The image's kube-reserved memory
// stays computed from the type's default max pods, as nodeadm computes it.
func configured(def *cloudprovider.InstanceType, k KubeletSettings) *cloudprovider.InstanceType {
	shape := &cloudprovider.InstanceType{Name: def.Name, Architecture: def.Architecture, Capacity: def.Capacity.DeepCopy()}
	if k.MaxPods != nil {
		shape.Capacity[corev1.ResourcePods] = *resource.NewQuantity(*k.MaxPods, resource.DecimalSI)
	}
	kubeReserved := imageKubeReserved(def.Capacity.Cpu().Value(), def.Capacity.Pods().Value())
	systemReserved := corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := k.KubeReserved[name]; ok {
			kubeReserved[name] = q
		}
		if q, ok := k.SystemReserved[name]; ok {
			systemReserved[name] = q
		}
	}
	eviction := corev1.ResourceList{}
	for signal, name := range map[string]corev1.ResourceName{"memory.available": corev1.ResourceMemory, "nodefs.available": corev1.ResourceEphemeralStorage} {
		capacity := shape.Capacity[name]
		threshold := imageEvictionHard[signal].Of(capacity)
		if hard, ok := k.EvictionHard[signal]; ok {
			threshold = hard.Of(capacity)
		}
		if soft, ok := k.EvictionSoft[signal]; ok {
			if q := soft.Of(capacity); q.Cmp(threshold) > 0 {
				threshold = q
			}
		}
		eviction[name] = threshold
	}
	shape.Overhead = cloudprovider.Overhead{KubeReserved: kubeReserved, SystemReserved: systemReserved, EvictionThreshold: eviction}
	return shape
}

// imageEvictionHard are the kubelet's hard eviction thresholds on EKS's images that take
// from allocatable.
var imageEvictionHard = map[string]Threshold{
	"memory.available": {Quantity: ptrTo(resource.MustParse("100Mi"))},
	"nodefs.available": {Percent: big.NewRat(10, 1)},
}

func ptrTo[T any](v T) *T { return &v }

// imageKubeReserved is what nodeadm reserves for Kubernetes on an EKS node: CPU by a
// sliding share of the cores (6% of the first, 1% of the second, 0.5% of the next two,
// 0.25% of the rest), memory of 255 MiB plus 11 MiB per pod of the type's default max
// pods, and ephemeral storage of 1 GiB.
func imageKubeReserved(cpus, pods int64) corev1.ResourceList {
	shares := []struct {
		cores    int64
		perMille float64
	}{{1, 60}, {1, 10}, {2, 5}, {math.MaxInt32, 2.5}}
	millicores, left := 0.0, cpus
	for _, s := range shares {
		n := min(left, s.cores)
		millicores += float64(n) * s.perMille
		left -= n
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(int64(math.Round(millicores)), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity((255+11*pods)<<20, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(1<<30, resource.BinarySI),
	}
}

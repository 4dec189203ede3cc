package aws

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// What a node of an instance type has and what its kubelet keeps back, as the EKS
// images (AL2023's nodeadm, and AL2's bootstrap before it) configure the kubelet.
// docs/aws.md explains each figure.

// vmMemoryOverheadPercent of an instance type's memory is not seen by the node: the
// kernel and the hypervisor keep it. EC2 lists 8192 MiB for m5.large, whose Node reports
// about 7.6 GiB. Karpenter subtracts 7.5% by default; so do we, which errs on the side of
// a node with room to spare rather than pods that do not fit.
const vmMemoryOverheadPercent = 0.075

// Extended resources of accelerators, as their device plugins name them.
const (
	resourceNvidiaGPU corev1.ResourceName = "nvidia.com/gpu"
	resourceAMDGPU    corev1.ResourceName = "amd.com/gpu"
	resourceGaudi     corev1.ResourceName = "habana.ai/gaudi"
	resourceNeuron    corev1.ResourceName = "aws.amazon.com/neuron"
)

// DefaultEphemeralStorage is a node's ephemeral storage when the node class does not size
// its root volume: the size of the root volume of EKS's AL2023 images and of
// Bottlerocket's data volume.
var DefaultEphemeralStorage = resource.MustParse("20Gi")

// maxPods is how many pods the VPC CNI gives addresses to on a node of the type, the
// figure EKS's eni-max-pods.txt lists and nodeadm sets as the kubelet's maxPods: each
// network interface of the default network card brings its addresses but the first, and
// two host-network pods (the CNI and kube-proxy) need none. Zero when EC2 does not say.
func maxPods(info *ec2types.InstanceTypeInfo) int64 {
	network := info.NetworkInfo
	if network == nil || network.Ipv4AddressesPerInterface == nil {
		return 0
	}
	// The VPC CNI uses the interfaces of the default network card only; types with
	// several cards (p5.48xlarge) list more interfaces in total than it attaches.
	interfaces := int64(aws.ToInt32(network.MaximumNetworkInterfaces))
	defaultCard := aws.ToInt32(network.DefaultNetworkCardIndex)
	for _, card := range network.NetworkCards {
		if aws.ToInt32(card.NetworkCardIndex) == defaultCard && card.MaximumNetworkInterfaces != nil {
			interfaces = int64(*card.MaximumNetworkInterfaces)
		}
	}
	addresses := int64(*network.Ipv4AddressesPerInterface)
	if interfaces <= 0 || addresses <= 1 {
		return 0
	}
	return interfaces*(addresses-1) + 2
}

// nodeCapacity is what a Node of the type reports, ephemeral storage aside: vCPUs,
// memory less the VM's share, the pods it may run, and its accelerators.
func nodeCapacity(info *ec2types.InstanceTypeInfo, pods int64) corev1.ResourceList {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(vcpus(info), resource.DecimalSI),
		corev1.ResourceMemory: *mebibytes(int64(float64(memoryMiB(info)) * (1 - vmMemoryOverheadPercent))),
		corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
	for name, count := range accelerators(info) {
		capacity[name] = *resource.NewQuantity(count, resource.DecimalSI)
	}
	return capacity
}

// accelerators counts the type's GPUs and Neuron devices by the extended resource their
// device plugins advertise; GPUs of other makers are left out.
func accelerators(info *ec2types.InstanceTypeInfo) map[corev1.ResourceName]int64 {
	counts := map[corev1.ResourceName]int64{}
	if info.GpuInfo != nil {
		for _, gpu := range info.GpuInfo.Gpus {
			var name corev1.ResourceName
			switch aws.ToString(gpu.Manufacturer) {
			case "NVIDIA":
				name = resourceNvidiaGPU
			case "AMD":
				name = resourceAMDGPU
			case "Habana":
				name = resourceGaudi
			default:
				continue
			}
			counts[name] += int64(aws.ToInt32(gpu.Count))
		}
	}
	switch {
	case info.NeuronInfo != nil:
		for _, device := range info.NeuronInfo.NeuronDevices {
			counts[resourceNeuron] += int64(aws.ToInt32(device.Count))
		}
	case info.InferenceAcceleratorInfo != nil:
		// Inferentia 1 (inf1) is listed as an inference accelerator; its Neuron device
		// plugin advertises it as aws.amazon.com/neuron all the same.
		for _, device := range info.InferenceAcceleratorInfo.Accelerators {
			if aws.ToString(device.Manufacturer) == "AWS" {
				counts[resourceNeuron] += int64(aws.ToInt32(device.Count))
			}
		}
	}
	for name, count := range counts {
		if count <= 0 {
			delete(counts, name)
		}
	}
	return counts
}

// ephemeralStorage is the size of a node's ephemeral storage: the volume the node class
// marks as its root volume, or else the device the image family keeps the kubelet's
// files on (/dev/xvda for AL2023 and custom images, /dev/xvdb for Bottlerocket, whose
// /dev/xvda holds the OS), or else DefaultEphemeralStorage.
func ephemeralStorage(class *v1beta1.EC2NodeClass) resource.Quantity {
	device := "/dev/xvda"
	if len(class.Status.AMIs) > 0 && class.Status.AMIs[0].Family == FamilyBottlerocket {
		device = "/dev/xvdb"
	}
	var chosen *v1beta1.BlockDeviceMapping
	for i, m := range class.Spec.BlockDeviceMappings {
		if m.RootVolume {
			chosen = &class.Spec.BlockDeviceMappings[i]
			break
		}
		if m.DeviceName == device && chosen == nil {
			chosen = &class.Spec.BlockDeviceMappings[i]
		}
	}
	if chosen == nil || chosen.EBS.VolumeSize == nil {
		return DefaultEphemeralStorage.DeepCopy()
	}
	return chosen.EBS.VolumeSize.DeepCopy()
}

// vcpus is the type's default number of vCPUs.
func vcpus(info *ec2types.InstanceTypeInfo) int64 {
	if info.VCpuInfo == nil {
		return 0
	}
	return int64(aws.ToInt32(info.VCpuInfo.DefaultVCpus))
}

// memoryMiB is the type's memory as EC2 lists it.
func memoryMiB(info *ec2types.InstanceTypeInfo) int64 {
	if info.MemoryInfo == nil {
		return 0
	}
	return aws.ToInt64(info.MemoryInfo.SizeInMiB)
}

func mebibytes(n int64) *resource.Quantity {
	return resource.NewQuantity(n<<20, resource.BinarySI)
}

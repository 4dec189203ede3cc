package aws

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// networkOf is the network part of DescribeInstanceTypes' answer: one card per entry of
// interfacesPerCard, the first the default.
func networkOf(addressesPerInterface int32, interfacesPerCard ...int32) *ec2types.NetworkInfo {
	info := &ec2types.NetworkInfo{Ipv4AddressesPerInterface: aws.Int32(addressesPerInterface), DefaultNetworkCardIndex: aws.Int32(0)}
	var total int32
	for n, interfaces := range interfacesPerCard {
		info.NetworkCards = append(info.NetworkCards, ec2types.NetworkCardInfo{NetworkCardIndex: aws.Int32(int32(n)), MaximumNetworkInterfaces: aws.Int32(interfaces)})
		total += interfaces
	}
	info.MaximumNetworkInterfaces = aws.Int32(total)
	return info
}

// The ENI limits are EC2's published figures; the max pods are those EKS lists in
// eni-max-pods.txt (amazon-eks-ami), which nodeadm sets as the kubelet's maxPods.
func TestMaxPodsFollowsEKS(t *testing.T) {
	for _, tt := range []struct {
		name    string
		network *ec2types.NetworkInfo
		want    int64
	}{
		{"m5.large", networkOf(10, 3), 29},
		{"t3.micro", networkOf(2, 2), 4},
		{"m5.4xlarge", networkOf(30, 8), 234},
		{"m5.24xlarge", networkOf(50, 15), 737},
		// Two network cards of 8 interfaces: the VPC CNI uses the default card only.
		{"c6in.32xlarge", networkOf(50, 8, 8), 394},
		{"no network data", &ec2types.NetworkInfo{}, 0},
		{"one address per interface", networkOf(1, 2), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := maxPods(&ec2types.InstanceTypeInfo{NetworkInfo: tt.network}); got != tt.want {
				t.Errorf("max pods = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestNodeCapacity(t *testing.T) {
	info := &ec2types.InstanceTypeInfo{
		VCpuInfo:   &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(4)},
		MemoryInfo: &ec2types.MemoryInfo{SizeInMiB: aws.Int64(16384)},
		GpuInfo:    &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{Count: aws.Int32(1), Manufacturer: aws.String("NVIDIA"), Name: aws.String("T4")}}},
	}
	got := nodeCapacity(info, 29)
	// 7.5% of 16384 MiB is the VM's: 15155.2 MiB, rounded down.
	for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "4", corev1.ResourceMemory: "15155Mi", corev1.ResourcePods: "29", resourceNvidiaGPU: "1"} {
		if q := got[name]; q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("capacity %s = %s, want %s", name, q.String(), want)
		}
	}
	if len(got) != 4 {
		t.Errorf("capacity = %v, want cpu, memory, pods and one GPU", got)
	}
}

func TestAccelerators(t *testing.T) {
	inf1 := &ec2types.InstanceTypeInfo{InferenceAcceleratorInfo: &ec2types.InferenceAcceleratorInfo{Accelerators: []ec2types.InferenceDeviceInfo{{Count: aws.Int32(1), Manufacturer: aws.String("AWS"), Name: aws.String("Inferentia")}}}}
	trn1 := &ec2types.InstanceTypeInfo{NeuronInfo: &ec2types.NeuronInfo{NeuronDevices: []ec2types.NeuronDeviceInfo{{Count: aws.Int32(16), Name: aws.String("Trainium")}}}}
	amd := &ec2types.InstanceTypeInfo{GpuInfo: &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{Count: aws.Int32(2), Manufacturer: aws.String("AMD")}}}}
	other := &ec2types.InstanceTypeInfo{GpuInfo: &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{Count: aws.Int32(1), Manufacturer: aws.String("Xilinx")}}}}
	for name, tt := range map[string]struct {
		info *ec2types.InstanceTypeInfo
		want map[corev1.ResourceName]int64
	}{
		"inf1":  {inf1, map[corev1.ResourceName]int64{resourceNeuron: 1}},
		"trn1":  {trn1, map[corev1.ResourceName]int64{resourceNeuron: 16}},
		"amd":   {amd, map[corev1.ResourceName]int64{resourceAMDGPU: 2}},
		"other": {other, map[corev1.ResourceName]int64{}},
	} {
		got := accelerators(tt.info)
		if len(got) != len(tt.want) {
			t.Errorf("%s: accelerators = %v, want %v", name, got, tt.want)
		}
		for r, n := range tt.want {
			if got[r] != n {
				t.Errorf("%s: accelerators = %v, want %v", name, got, tt.want)
			}
		}
	}
}

func TestEphemeralStorage(t *testing.T) {
	size := func(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
	device := func(name, volume string, root bool) v1beta1.BlockDeviceMapping {
		m := v1beta1.BlockDeviceMapping{DeviceName: name, RootVolume: root}
		if volume != "" {
			m.EBS.VolumeSize = size(volume)
		}
		return m
	}
	for _, tt := range []struct {
		name     string
		family   string
		mappings []v1beta1.BlockDeviceMapping
		want     string
	}{
		{name: "no mappings", want: "20Gi"},
		{name: "root volume marked", mappings: []v1beta1.BlockDeviceMapping{device("/dev/xvda", "30Gi", false), device("/dev/sdf", "100Gi", true)}, want: "100Gi"},
		{name: "al2023's device", family: "al2023", mappings: []v1beta1.BlockDeviceMapping{device("/dev/xvda", "50Gi", false)}, want: "50Gi"},
		{name: "bottlerocket's data volume", family: "bottlerocket", mappings: []v1beta1.BlockDeviceMapping{device("/dev/xvda", "4Gi", false), device("/dev/xvdb", "80Gi", false)}, want: "80Gi"},
		{name: "root volume without a size", mappings: []v1beta1.BlockDeviceMapping{device("/dev/xvda", "", true)}, want: "20Gi"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			class := &v1beta1.EC2NodeClass{}
			class.Spec.BlockDeviceMappings = tt.mappings
			class.Status.AMIs = []v1beta1.ResolvedAMI{{ID: "ami-1", Architecture: "amd64", Family: tt.family}}
			if got := ephemeralStorage(class); got.Cmp(resource.MustParse(tt.want)) != 0 {
				t.Errorf("ephemeral storage = %s, want %s", got.String(), tt.want)
			}
		})
	}
}

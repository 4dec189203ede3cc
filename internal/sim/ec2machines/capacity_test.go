package ec2machines

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func info(name string, vcpus int32, mib int64, enis, ips int32, arch ec2types.ArchitectureType) ec2types.InstanceTypeInfo {
	return ec2types.InstanceTypeInfo{
		InstanceType:  ec2types.InstanceType(name),
		VCpuInfo:      &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(vcpus)},
		MemoryInfo:    &ec2types.MemoryInfo{SizeInMiB: aws.Int64(mib)},
		NetworkInfo:   &ec2types.NetworkInfo{MaximumNetworkInterfaces: aws.Int32(enis), Ipv4AddressesPerInterface: aws.Int32(ips)},
		ProcessorInfo: &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{arch}},
	}
}

// multiCard gives a type cards network cards of perCard interfaces each, the first the
// default.
func multiCard(i ec2types.InstanceTypeInfo, cards, perCard int32) ec2types.InstanceTypeInfo {
	i.NetworkInfo.DefaultNetworkCardIndex = aws.Int32(0)
	for n := range cards {
		i.NetworkInfo.NetworkCards = append(i.NetworkInfo.NetworkCards, ec2types.NetworkCardInfo{NetworkCardIndex: aws.Int32(n), MaximumNetworkInterfaces: aws.Int32(perCard)})
	}
	return i
}

// TestMachineShape checks the shapes against EKS's published figures: max pods from its
// eni-max-pods table, CPU and memory reservations from its bootstrap's formula.
func TestMachineShape(t *testing.T) {
	for _, c := range []struct {
		info                      ec2types.InstanceTypeInfo
		arch                      string
		pods                      int64
		allocatableCPU, allocated string
	}{
		// m5.large: 3 interfaces of 10 addresses; 70m reserved of 2 cores; 255+11×29+100 MiB.
		{info("m5.large", 2, 8192, 3, 10, ec2types.ArchitectureTypeX8664), "amd64", 29, "1930m", "7518Mi"},
		// m5.xlarge: 4 × 15; 80m of 4; 255+11×58+100 = 993 MiB.
		{info("m5.xlarge", 4, 16384, 4, 15, ec2types.ArchitectureTypeX8664), "amd64", 58, "3920m", "15391Mi"},
		// m5.4xlarge: 8 × 30; 110m of 16.
		{info("m5.4xlarge", 16, 65536, 8, 30, ec2types.ArchitectureTypeX8664), "amd64", 234, "15890m", "62607Mi"},
		// p5.48xlarge: 32 cards of 2 interfaces (64 in all) of 50 addresses; the CNI uses
		// the default card's 2: 2 × 49 + 2 = 100 pods, as eni-max-pods.txt lists.
		{multiCard(info("p5.48xlarge", 192, 2097152, 64, 50, ec2types.ArchitectureTypeX8664), 32, 2), "amd64", 100, "191450m", "2095697Mi"},
		// c6g.medium: 2 × 4; 60m of 1.
		{info("c6g.medium", 1, 2048, 2, 4, ec2types.ArchitectureTypeArm64), "arm64", 8, "940m", "1605Mi"},
	} {
		shape, err := machineShape(c.info)
		if err != nil {
			t.Fatal(err)
		}
		allocatable := shape.Allocatable()
		if shape.Architecture != c.arch || shape.Capacity.Pods().Value() != c.pods ||
			!allocatable.Cpu().Equal(resource.MustParse(c.allocatableCPU)) || !allocatable.Memory().Equal(resource.MustParse(c.allocated)) {
			t.Errorf("%s: %s, %d pods, allocatable cpu %s memory %s; want %s, %d, %s, %s", shape.Name, shape.Architecture,
				shape.Capacity.Pods().Value(), allocatable.Cpu(), allocatable.Memory(), c.arch, c.pods, c.allocatableCPU, c.allocated)
		}
		if got := shape.Capacity[corev1.ResourceEphemeralStorage]; !got.Equal(resource.MustParse("20Gi")) {
			t.Errorf("%s: ephemeral storage %s", shape.Name, &got)
		}
	}
}

func TestMachineShapeRefusesIncompleteTypes(t *testing.T) {
	noNetwork := info("x.large", 2, 8192, 3, 10, ec2types.ArchitectureTypeX8664)
	noNetwork.NetworkInfo = nil
	noCPU := info("x.large", 2, 8192, 3, 10, ec2types.ArchitectureTypeX8664)
	noCPU.VCpuInfo = nil
	for _, i := range []ec2types.InstanceTypeInfo{noNetwork, noCPU} {
		if _, err := machineShape(i); err == nil {
			t.Errorf("%+v: no error", i)
		}
	}
}

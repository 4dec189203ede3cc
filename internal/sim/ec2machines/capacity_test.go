package ec2machines

import (
	"math/big"
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

// TestConfiguredShape checks a kubelet configuration's effect on what an m5.large
// (2 vCPUs, 8192 MiB, 29 pods, 20Gi root volume) reports, against figures worked out by
// hand: by default 1930m, 7518Mi (8192 − 255 − 11×29 − 100) and 17Gi (20 − 1 − 2) of
// ephemeral storage are allocatable.
func TestConfiguredShape(t *testing.T) {
	def, err := machineShape(info("m5.large", 2, 8192, 3, 10, ec2types.ArchitectureTypeX8664))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		kubelet KubeletSettings
		pods    int64
		// allocatable cpu, memory and ephemeral storage
		cpu, memory, storage string
	}{
		{"the image's defaults", KubeletSettings{}, 29, "1930m", "7518Mi", "17Gi"},
		// Max pods change the pods capacity, not the image's kube-reserved memory, which
		// nodeadm computes from the type's default max pods.
		{"max pods", KubeletSettings{MaxPods: ptr64(110)}, 110, "1930m", "7518Mi", "17Gi"},
		// kube-reserved memory replaces the image's 574Mi: 8192 − 1024 − 100.
		{"kube-reserved memory", KubeletSettings{MaxPods: ptr64(20), KubeReserved: corev1.ResourceList{"memory": q("1Gi")}}, 20, "1930m", "7068Mi", "17Gi"},
		// kube-reserved cpu replaces the image's 70m; pid reserves no node resource.
		{"kube-reserved cpu and pid", KubeletSettings{KubeReserved: corev1.ResourceList{"cpu": q("500m"), "pid": q("100")}}, 29, "1500m", "7518Mi", "17Gi"},
		// system-reserved comes on top of kube-reserved.
		{"system-reserved", KubeletSettings{SystemReserved: corev1.ResourceList{"cpu": q("100m"), "memory": q("200Mi"), "ephemeral-storage": q("1Gi")}}, 29, "1830m", "7318Mi", "16Gi"},
		// A hard memory threshold replaces the image's 100Mi; 5% of 8192Mi is 429,496,729
		// bytes, rounded down.
		{"hard memory threshold", KubeletSettings{EvictionHard: map[string]Threshold{"memory.available": {Quantity: ptrTo(q("500Mi"))}}}, 29, "1930m", "7118Mi", "17Gi"},
		{"hard memory percentage", KubeletSettings{EvictionHard: map[string]Threshold{"memory.available": {Percent: big.NewRat(5, 1)}}}, 29, "1930m", "7558555239", "17Gi"},
		// 0% is a threshold the kubelet ignores: no memory kept free; 7.5% of 20Gi is
		// 1.5Gi.
		{"ignored and fractional thresholds", KubeletSettings{EvictionHard: map[string]Threshold{"memory.available": {}, "nodefs.available": {Percent: big.NewRat(75, 10)}}}, 29, "1930m", "7618Mi", "17920Mi"},
		// A hard nodefs threshold replaces the image's 10%: 20Gi − 1Gi − 4Gi.
		{"hard nodefs threshold", KubeletSettings{EvictionHard: map[string]Threshold{"nodefs.available": {Percent: big.NewRat(20, 1)}}}, 29, "1930m", "7518Mi", "15Gi"},
		// A soft threshold counts where it is larger than the hard one.
		{"soft above hard", KubeletSettings{EvictionSoft: map[string]Threshold{"memory.available": {Quantity: ptrTo(q("1Gi"))}}}, 29, "1930m", "6594Mi", "17Gi"},
		{"soft below hard", KubeletSettings{EvictionSoft: map[string]Threshold{"memory.available": {Quantity: ptrTo(q("50Mi"))}, "nodefs.available": {Percent: big.NewRat(5, 1)}}}, 29, "1930m", "7518Mi", "17Gi"},
		// Other signals and the image GC thresholds take nothing from allocatable.
		{"other signals and image GC", KubeletSettings{
			EvictionHard:                map[string]Threshold{"imagefs.available": {Percent: big.NewRat(30, 1)}, "pid.available": {Percent: big.NewRat(10, 1)}},
			ImageGCHighThresholdPercent: ptr64(90), ImageGCLowThresholdPercent: ptr64(50),
		}, 29, "1930m", "7518Mi", "17Gi"},
	} {
		t.Run(c.name, func(t *testing.T) {
			shape := configured(def, c.kubelet)
			allocatable := shape.Allocatable()
			for name, want := range map[corev1.ResourceName]string{
				corev1.ResourceCPU: c.cpu, corev1.ResourceMemory: c.memory, corev1.ResourceEphemeralStorage: c.storage,
				corev1.ResourcePods: resource.NewQuantity(c.pods, resource.DecimalSI).String(),
			} {
				if got := allocatable[name]; !got.Equal(resource.MustParse(want)) {
					t.Errorf("allocatable %s %s, want %s", name, &got, want)
				}
			}
			if got := shape.Capacity.Pods().Value(); got != c.pods {
				t.Errorf("pods capacity %d, want %d", got, c.pods)
			}
			if !shape.Capacity.Memory().Equal(resource.MustParse("8Gi")) || !shape.Capacity.Cpu().Equal(resource.MustParse("2")) {
				t.Errorf("capacity %v: only pods change", shape.Capacity)
			}
		})
	}
	if def.Capacity.Pods().Value() != 29 {
		t.Errorf("configuring changed the type's default shape: %v", def.Capacity)
	}
}

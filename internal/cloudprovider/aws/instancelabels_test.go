package aws

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"T4":                    "t4",
		"L40S":                  "l40s",
		"Radeon Pro V520":       "radeon-pro-v520",
		"nitro":                 "nitro",
		"":                      "",
		"-odd/name.":            "odd-name",
		strings.Repeat("a", 70): strings.Repeat("a", 63),
	} {
		if got := labelValue(in); got != want {
			t.Errorf("labelValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInstanceAttributes(t *testing.T) {
	g4dn := &ec2types.InstanceTypeInfo{
		InstanceType: "g4dn.xlarge",
		Hypervisor:   ec2types.InstanceTypeHypervisorNitro,
		VCpuInfo:     &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(4)},
		MemoryInfo:   &ec2types.MemoryInfo{SizeInMiB: aws.Int64(16384)},
		GpuInfo:      &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{Count: aws.Int32(1), Manufacturer: aws.String("NVIDIA"), Name: aws.String("T4")}}},
		NetworkInfo: &ec2types.NetworkInfo{
			NetworkPerformance: aws.String("Up to 25 Gigabit"),
			NetworkCards:       []ec2types.NetworkCardInfo{{BaselineBandwidthInGbps: aws.Float64(5)}},
		},
	}
	want := map[string]string{
		v1beta1.LabelInstanceFamily:           "g4dn",
		v1beta1.LabelInstanceCategory:         "g",
		v1beta1.LabelInstanceGeneration:       "4",
		v1beta1.LabelInstanceSize:             "xlarge",
		v1beta1.LabelInstanceCPU:              "4",
		v1beta1.LabelInstanceMemory:           "16384",
		v1beta1.LabelInstanceGPUCount:         "1",
		v1beta1.LabelInstanceGPUName:          "t4",
		v1beta1.LabelInstanceHypervisor:       "nitro",
		v1beta1.LabelInstanceNetworkBandwidth: "5000",
	}
	if diff := cmp.Diff(want, instanceAttributes(g4dn)); diff != "" {
		t.Errorf("attributes of g4dn.xlarge (-want +got):\n%s", diff)
	}

	// A bare-metal type without GPUs, whose network cards give no baseline but whose
	// performance is an exact figure.
	metal := &ec2types.InstanceTypeInfo{
		InstanceType: "bmn-sf1.metal",
		VCpuInfo:     &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(64)},
		MemoryInfo:   &ec2types.MemoryInfo{SizeInMiB: aws.Int64(262144)},
		NetworkInfo:  &ec2types.NetworkInfo{NetworkPerformance: aws.String("50 Gigabit")},
	}
	want = map[string]string{
		v1beta1.LabelInstanceFamily:           "bmn-sf1",
		v1beta1.LabelInstanceCategory:         "bmn",
		v1beta1.LabelInstanceSize:             "metal",
		v1beta1.LabelInstanceCPU:              "64",
		v1beta1.LabelInstanceMemory:           "262144",
		v1beta1.LabelInstanceHypervisor:       "",
		v1beta1.LabelInstanceNetworkBandwidth: "50000",
	}
	if diff := cmp.Diff(want, instanceAttributes(metal)); diff != "" {
		t.Errorf("attributes of bmn-sf1.metal (-want +got):\n%s", diff)
	}
}

// "Up to" performances are bursts and named ones no figure: no bandwidth label.
func TestNetworkBandwidthWithoutBaseline(t *testing.T) {
	for _, performance := range []string{"Up to 5 Gigabit", "Moderate", "Low to Moderate", ""} {
		info := &ec2types.InstanceTypeInfo{NetworkInfo: &ec2types.NetworkInfo{NetworkPerformance: aws.String(performance)}}
		if mbps, ok := networkBandwidthMbps(info); ok {
			t.Errorf("%q: bandwidth %d Mbps, want none", performance, mbps)
		}
	}
}

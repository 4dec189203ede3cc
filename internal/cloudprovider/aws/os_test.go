package aws

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Every EC2 offering is linux, as every node Stratos launches: a pool's kubernetes.io/os
// In [linux] requirement matches each offering, and In [windows] none.
func TestEC2OfferingsAreLinux(t *testing.T) {
	info := &ec2types.InstanceTypeInfo{
		InstanceType:                 ec2types.InstanceTypeM5Large,
		Hypervisor:                   ec2types.InstanceTypeHypervisorNitro,
		VCpuInfo:                     &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(2)},
		MemoryInfo:                   &ec2types.MemoryInfo{SizeInMiB: aws.Int64(8192)},
		NetworkInfo:                  networkOf(10, 3),
		ProcessorInfo:                &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{ec2types.ArchitectureTypeX8664}},
		SupportedUsageClasses:        []ec2types.UsageClassType{ec2types.UsageClassTypeOnDemand, ec2types.UsageClassTypeSpot},
		SupportedVirtualizationTypes: []ec2types.VirtualizationType{ec2types.VirtualizationTypeHvm},
		SupportedRootDeviceTypes:     []ec2types.RootDeviceType{ec2types.RootDeviceTypeEbs},
	}
	zones := map[string]bool{"us-east-1a": true, "us-east-1b": true}
	shape := classShape{zones: "us-east-1a,us-east-1b", archs: "amd64", ephemeral: DefaultEphemeralStorage.Value()}
	types := buildInstanceTypes(typeCatalog{newCatalogType(info, zones)}, prices{}, shape)
	if len(types) != 1 || len(types[0].Offerings) == 0 {
		t.Fatalf("built %d types, want m5.large with offerings", len(types))
	}
	os := func(values ...string) []corev1.NodeSelectorRequirement {
		return []corev1.NodeSelectorRequirement{{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: values}}
	}
	for _, o := range types[0].Offerings {
		if got := types[0].Labels(o)[corev1.LabelOSStable]; got != "linux" {
			t.Errorf("offering %s/%s: kubernetes.io/os=%q, want linux", o.Zone, o.CapacityType, got)
		}
		if ok, err := cloudprovider.Satisfies(types[0], o, os("linux")); err != nil || !ok {
			t.Errorf("offering %s/%s does not meet kubernetes.io/os In [linux] (%v)", o.Zone, o.CapacityType, err)
		}
		if ok, err := cloudprovider.Satisfies(types[0], o, os("windows")); err != nil || ok {
			t.Errorf("offering %s/%s meets kubernetes.io/os In [windows] (%v)", o.Zone, o.CapacityType, err)
		}
	}
}

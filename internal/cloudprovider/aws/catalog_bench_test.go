package aws

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// benchmarkCatalog is a catalogue of 800 types offered in 6 zones, the size of a large
// region's.
func benchmarkCatalog() typeCatalog {
	zones := map[string]bool{}
	for _, z := range "abcdef" {
		zones["us-east-1"+string(z)] = true
	}
	var types typeCatalog
	for n := range 800 {
		info := &ec2types.InstanceTypeInfo{
			InstanceType:                 ec2types.InstanceType(fmt.Sprintf("m%d.%dxlarge", n%9+1, n)),
			Hypervisor:                   ec2types.InstanceTypeHypervisorNitro,
			VCpuInfo:                     &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(int32(2 + n%64))},
			MemoryInfo:                   &ec2types.MemoryInfo{SizeInMiB: aws.Int64(int64(4096 * (1 + n%64)))},
			NetworkInfo:                  networkOf(30, 8),
			ProcessorInfo:                &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{ec2types.ArchitectureTypeX8664}},
			SupportedUsageClasses:        []ec2types.UsageClassType{ec2types.UsageClassTypeOnDemand, ec2types.UsageClassTypeSpot},
			SupportedVirtualizationTypes: []ec2types.VirtualizationType{ec2types.VirtualizationTypeHvm},
			SupportedRootDeviceTypes:     []ec2types.RootDeviceType{ec2types.RootDeviceTypeEbs},
		}
		types = append(types, newCatalogType(info, zones))
	}
	return types
}

// Building the answer for a node class, which happens once per class and catalogue
// version.
func BenchmarkBuildInstanceTypes(b *testing.B) {
	types := benchmarkCatalog()
	shape := classShape{zones: "us-east-1a,us-east-1b,us-east-1c", archs: "amd64", ephemeral: DefaultEphemeralStorage.Value()}
	for b.Loop() {
		if got := buildInstanceTypes(types, prices{}, shape); len(got) != len(types) {
			b.Fatalf("%d types, want %d", len(got), len(types))
		}
	}
}

// InstanceTypes once the answer is memoised: what every call but the first costs.
func BenchmarkInstanceTypesMemoised(b *testing.B) {
	c := newCatalog(Options{}.WithDefaults(), &Clients{})
	c.types.value, c.types.version = benchmarkCatalog(), 1
	c.spot.version = 1
	class := catalogClass("bench", []string{"us-east-1a", "us-east-1b", "us-east-1c"}, "amd64")
	shape, err := shapeOf(class)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if got, err := c.instanceTypes(context.Background(), shape); err != nil || len(got) != 800 {
			b.Fatalf("%d types, %v", len(got), err)
		}
	}
}

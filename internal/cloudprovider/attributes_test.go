package cloudprovider

import (
	"maps"
	"testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestInstanceTypeNameAttributes(t *testing.T) {
	const (
		family     = v1beta1.LabelInstanceFamily
		category   = v1beta1.LabelInstanceCategory
		generation = v1beta1.LabelInstanceGeneration
		size       = v1beta1.LabelInstanceSize
	)
	tests := []struct {
		name string
		want map[string]string
	}{
		{"m5.2xlarge", map[string]string{family: "m5", category: "m", generation: "5", size: "2xlarge"}},
		{"c7gn.metal", map[string]string{family: "c7gn", category: "c", generation: "7", size: "metal"}},
		{"g4dn.xlarge", map[string]string{family: "g4dn", category: "g", generation: "4", size: "xlarge"}},
		{"inf2.48xlarge", map[string]string{family: "inf2", category: "inf", generation: "2", size: "48xlarge"}},
		{"x2iedn.32xlarge", map[string]string{family: "x2iedn", category: "x", generation: "2", size: "32xlarge"}},
		{"mac2-m2pro.metal", map[string]string{family: "mac2-m2pro", category: "mac", generation: "2", size: "metal"}},
		{"c6i.metal-24xl", map[string]string{family: "c6i", category: "c", generation: "6", size: "metal-24xl"}},
		{"u7i-12tb.224xlarge", map[string]string{family: "u7i-12tb", category: "u", generation: "7", size: "224xlarge"}},
		// The 6tb after the dash is memory; the 1 after it the generation.
		{"u-6tb1.112xlarge", map[string]string{family: "u-6tb1", category: "u", generation: "1", size: "112xlarge"}},
		{"c7i-flex.2xlarge", map[string]string{family: "c7i-flex", category: "c", generation: "7", size: "2xlarge"}},
		{"m7i.metal-24xl", map[string]string{family: "m7i", category: "m", generation: "7", size: "metal-24xl"}},
		{"t3a.nano", map[string]string{family: "t3a", category: "t", generation: "3", size: "nano"}},
		// Names that show less give less.
		{"m5", map[string]string{family: "m5", category: "m", generation: "5"}},
		{"m5.", map[string]string{family: "m5", category: "m", generation: "5"}},
		{"Custom1.big", map[string]string{family: "Custom1", size: "big"}},
		{"42.large", map[string]string{family: "42", size: "large"}},
		{"", map[string]string{}},
		{".large", map[string]string{}},
	}
	for _, tt := range tests {
		if got := InstanceTypeNameAttributes(tt.name); !maps.Equal(got, tt.want) {
			t.Errorf("InstanceTypeNameAttributes(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestInstanceFactsAttributes(t *testing.T) {
	gpu := InstanceFacts{Name: "g4dn.xlarge", VCPUs: 4, MemoryMiB: 16384, GPUs: 1, GPUName: "T4", Hypervisor: "nitro", NetworkBandwidthMbps: 5000}
	want := map[string]string{
		v1beta1.LabelInstanceFamily: "g4dn", v1beta1.LabelInstanceCategory: "g", v1beta1.LabelInstanceGeneration: "4",
		v1beta1.LabelInstanceSize: "xlarge", v1beta1.LabelInstanceCPU: "4", v1beta1.LabelInstanceMemory: "16384",
		v1beta1.LabelInstanceGPUCount: "1", v1beta1.LabelInstanceGPUName: "t4", v1beta1.LabelInstanceHypervisor: "nitro",
		v1beta1.LabelInstanceNetworkBandwidth: "5000",
	}
	if got := gpu.Attributes(); !maps.Equal(got, want) {
		t.Errorf("GPU type: %v, want %v", got, want)
	}
	// No GPU: no GPU labels; bare metal: an empty hypervisor; unknown bandwidth: none.
	metal := InstanceFacts{Name: "m5.metal", VCPUs: 96, MemoryMiB: 393216}
	want = map[string]string{
		v1beta1.LabelInstanceFamily: "m5", v1beta1.LabelInstanceCategory: "m", v1beta1.LabelInstanceGeneration: "5",
		v1beta1.LabelInstanceSize: "metal", v1beta1.LabelInstanceCPU: "96", v1beta1.LabelInstanceMemory: "393216",
		v1beta1.LabelInstanceHypervisor: "",
	}
	if got := metal.Attributes(); !maps.Equal(got, want) {
		t.Errorf("metal type: %v, want %v", got, want)
	}
}

func TestLabelsCarryTheAttributes(t *testing.T) {
	it := &InstanceType{Name: "m5.large", Architecture: "amd64", Attributes: map[string]string{
		v1beta1.LabelInstanceCPU: "2",
		// An attribute cannot override what the offering says.
		v1beta1.LabelCapacityType: "reserved",
	}}
	labels := it.Labels(Offering{Zone: "z1", CapacityType: v1beta1.CapacityTypeSpot})
	if labels[v1beta1.LabelInstanceCPU] != "2" || labels[v1beta1.LabelCapacityType] != v1beta1.CapacityTypeSpot {
		t.Errorf("labels %v", labels)
	}
	if it.Attributes[v1beta1.LabelCapacityType] != "reserved" {
		t.Error("Labels changed the type's attributes")
	}
}

package cloudprovider

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// InstanceFacts are what a cloud knows of an instance type, from which both clouds make
// the type's Attributes: the well-known instance labels (v1beta1.LabelInstance*).
type InstanceFacts struct {
	// Name such as m5.2xlarge: the family, category, generation and size are read from it.
	Name string
	// VCPUs and MemoryMiB are the machine's.
	VCPUs     int64
	MemoryMiB int64
	// GPUs and GPUName (lower case, such as t4 or a10g); zero and empty for none.
	GPUs    int64
	GPUName string
	// Hypervisor such as nitro or xen; empty for bare metal.
	Hypervisor string
	// NetworkBandwidthMbps is the baseline bandwidth; zero when the cloud does not say.
	NetworkBandwidthMbps int64
}

// Attributes returns the instance labels of a type with these facts. The GPU labels are
// there only for types with GPUs, the bandwidth only when known; the hypervisor always,
// empty for bare metal.
func (f InstanceFacts) Attributes() map[string]string {
	attrs := InstanceTypeNameAttributes(f.Name)
	attrs[v1beta1.LabelInstanceCPU] = strconv.FormatInt(f.VCPUs, 10)
	attrs[v1beta1.LabelInstanceMemory] = strconv.FormatInt(f.MemoryMiB, 10)
	attrs[v1beta1.LabelInstanceHypervisor] = f.Hypervisor
	if f.GPUs > 0 {
		attrs[v1beta1.LabelInstanceGPUCount] = strconv.FormatInt(f.GPUs, 10)
		if f.GPUName != "" {
			attrs[v1beta1.LabelInstanceGPUName] = strings.ToLower(f.GPUName)
		}
	}
	if f.NetworkBandwidthMbps > 0 {
		attrs[v1beta1.LabelInstanceNetworkBandwidth] = strconv.FormatInt(f.NetworkBandwidthMbps, 10)
	}
	return attrs
}

// InstanceTypeNameAttributes reads the family, category, generation and size from an
// EC2-style instance type name, family.size: m5.2xlarge is family m5, category m,
// generation 5, size 2xlarge; c7gn.metal is c7gn, c, 7, metal. High-memory families put
// their memory between the category and the generation: u-6tb1 is category u,
// generation 1. The category is the family's leading letters and the generation the
// digits after them. What a name does not show is left out, so a name without a dot
// has only a family.
func InstanceTypeNameAttributes(name string) map[string]string {
	attrs := map[string]string{}
	family, size, hasSize := strings.Cut(name, ".")
	if family == "" {
		return attrs
	}
	attrs[v1beta1.LabelInstanceFamily] = family
	if hasSize && size != "" {
		attrs[v1beta1.LabelInstanceSize] = size
	}
	if m := familyPattern.FindStringSubmatch(family); m != nil {
		attrs[v1beta1.LabelInstanceCategory] = m[1]
		if m[2] != "" {
			attrs[v1beta1.LabelInstanceGeneration] = m[2]
		}
	}
	return attrs
}

// familyPattern reads the category and the generation off a family: the leading letters,
// then the digits after them or after a memory size (u-6tb1).
var familyPattern = regexp.MustCompile(`^([a-z]+)(?:-[0-9]+tb)?([0-9]*)`)

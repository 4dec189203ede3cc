package cloudprovider

import (
	"strconv"
	"strings"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// InstanceFacts are what a cloud knows of an instance type, from which both clouds make
// the type's Attributes: the well-known instance labels (v1alpha1.LabelInstance*).
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
	attrs[v1alpha1.LabelInstanceCPU] = strconv.FormatInt(f.VCPUs, 10)
	attrs[v1alpha1.LabelInstanceMemory] = strconv.FormatInt(f.MemoryMiB, 10)
	attrs[v1alpha1.LabelInstanceHypervisor] = f.Hypervisor
	if f.GPUs > 0 {
		attrs[v1alpha1.LabelInstanceGPUCount] = strconv.FormatInt(f.GPUs, 10)
		if f.GPUName != "" {
			attrs[v1alpha1.LabelInstanceGPUName] = strings.ToLower(f.GPUName)
		}
	}
	if f.NetworkBandwidthMbps > 0 {
		attrs[v1alpha1.LabelInstanceNetworkBandwidth] = strconv.FormatInt(f.NetworkBandwidthMbps, 10)
	}
	return attrs
}

// InstanceTypeNameAttributes reads the family, category, generation and size from an
// EC2-style instance type name, family.size: m5.2xlarge is family m5, category m,
// generation 5, size 2xlarge; c7gn.metal is c7gn, c, 7, metal; u-6tb1.112xlarge is
// u-6tb1 and u, with no generation (the digits after the dash are its memory). The
// category is the family's leading letters and the generation the digits right after
// them. What a name does not show is left out, so a name without a dot has only a
// family.
func InstanceTypeNameAttributes(name string) map[string]string {
	attrs := map[string]string{}
	family, size, hasSize := strings.Cut(name, ".")
	if family == "" {
		return attrs
	}
	attrs[v1alpha1.LabelInstanceFamily] = family
	if hasSize && size != "" {
		attrs[v1alpha1.LabelInstanceSize] = size
	}
	letters := leading(family, isLower)
	if letters == "" {
		return attrs
	}
	attrs[v1alpha1.LabelInstanceCategory] = letters
	if digits := leading(family[len(letters):], isDigit); digits != "" {
		attrs[v1alpha1.LabelInstanceGeneration] = digits
	}
	return attrs
}

// leading returns the longest prefix of s whose bytes all satisfy ok.
func leading(s string, ok func(byte) bool) string {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return s[:i]
		}
	}
	return s
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

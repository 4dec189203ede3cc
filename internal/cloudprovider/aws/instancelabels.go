package aws

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// instanceAttributes are the well-known instance labels (v1beta1.LabelInstance*) of a
// type, from what DescribeInstanceTypes says of it, made the way the fake cloud makes
// its own (cloudprovider.InstanceFacts). Labels that do not apply (GPUs on a type
// without) or that EC2 does not say are absent.
func instanceAttributes(info *ec2types.InstanceTypeInfo) map[string]string {
	facts := cloudprovider.InstanceFacts{
		Name:      string(info.InstanceType),
		VCPUs:     vcpus(info),
		MemoryMiB: memoryMiB(info),
		// Bare-metal types have no hypervisor: the label is there, empty.
		Hypervisor: labelValue(string(info.Hypervisor)),
	}
	facts.GPUs, facts.GPUName = gpus(info)
	if mbps, ok := networkBandwidthMbps(info); ok {
		facts.NetworkBandwidthMbps = mbps
	}
	return facts.Attributes()
}

// gpus counts the type's GPUs of every maker, and names the first kind as a label value
// (T4 is t4, L40S is l40s).
func gpus(info *ec2types.InstanceTypeInfo) (count int64, name string) {
	if info.GpuInfo == nil {
		return 0, ""
	}
	for _, gpu := range info.GpuInfo.Gpus {
		count += int64(aws.ToInt32(gpu.Count))
		if name == "" {
			name = labelValue(aws.ToString(gpu.Name))
		}
	}
	return count, name
}

// exactGigabit reads a network performance such as "25 Gigabit"; "Up to 10 Gigabit" is
// a burst, not a baseline, and "Moderate" no figure at all.
var exactGigabit = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?) Gigabit$`)

// networkBandwidthMbps is the type's baseline network bandwidth: the sum of its network
// cards' baselines, or else the performance EC2 states when it is an exact figure.
func networkBandwidthMbps(info *ec2types.InstanceTypeInfo) (int64, bool) {
	if info.NetworkInfo == nil {
		return 0, false
	}
	var gbps float64
	for _, card := range info.NetworkInfo.NetworkCards {
		gbps += aws.ToFloat64(card.BaselineBandwidthInGbps)
	}
	if gbps > 0 {
		return int64(math.Round(gbps * 1000)), true
	}
	if m := exactGigabit.FindStringSubmatch(aws.ToString(info.NetworkInfo.NetworkPerformance)); m != nil {
		if g, err := strconv.ParseFloat(m[1], 64); err == nil && g > 0 {
			return int64(math.Round(g * 1000)), true
		}
	}
	return 0, false
}

// labelInvalid are the runs of characters a label value may not hold.
var labelInvalid = regexp.MustCompile(`[^a-z0-9._-]+`)

// labelValue turns s into a valid label value: lower case, other characters as dashes,
// at most 63 characters, starting and ending with a letter or digit.
func labelValue(s string) string {
	v := labelInvalid.ReplaceAllString(strings.ToLower(s), "-")
	if len(v) > validation.LabelValueMaxLength {
		v = v[:validation.LabelValueMaxLength]
	}
	return strings.Trim(v, "._-")
}

package aws

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// instanceName is an EC2 instance type name taken apart: m5.large is family m5, category
// m, generation 5, size large.
type instanceName struct {
	family, category, generation, size string
}

// familyPattern reads the category and the generation off a family: the letters before
// the first digits, where high-memory families (u-6tb1) put their memory in between.
// Families it does not read (bmn-sf1) have neither.
var familyPattern = regexp.MustCompile(`^([a-z]+)(?:-[0-9]+tb)?([0-9]+)`)

// parseInstanceName takes an instance type name apart; ok is false for a name without a
// family and a size.
func parseInstanceName(name string) (instanceName, bool) {
	family, size, found := strings.Cut(name, ".")
	if !found || family == "" || size == "" {
		return instanceName{}, false
	}
	n := instanceName{family: family, size: size}
	if m := familyPattern.FindStringSubmatch(family); m != nil {
		n.category, n.generation = m[1], m[2]
	}
	return n, true
}

// instanceAttributes are the well-known instance labels (v1alpha1.LabelInstance*) of a
// type, from what DescribeInstanceTypes says of it. Labels that do not apply (GPUs on a
// type without) or that EC2 does not say are absent.
func instanceAttributes(info *ec2types.InstanceTypeInfo) map[string]string {
	attrs := map[string]string{
		v1alpha1.LabelInstanceCPU:    strconv.FormatInt(vcpus(info), 10),
		v1alpha1.LabelInstanceMemory: strconv.FormatInt(memoryMiB(info), 10),
		// Bare-metal types have no hypervisor: the label is there, empty.
		v1alpha1.LabelInstanceHypervisor: labelValue(string(info.Hypervisor)),
	}
	if n, ok := parseInstanceName(string(info.InstanceType)); ok {
		attrs[v1alpha1.LabelInstanceFamily] = n.family
		attrs[v1alpha1.LabelInstanceSize] = n.size
		if n.category != "" {
			attrs[v1alpha1.LabelInstanceCategory] = n.category
			attrs[v1alpha1.LabelInstanceGeneration] = n.generation
		}
	}
	if count, name := gpus(info); count > 0 {
		attrs[v1alpha1.LabelInstanceGPUCount] = strconv.FormatInt(count, 10)
		if name != "" {
			attrs[v1alpha1.LabelInstanceGPUName] = name
		}
	}
	if mbps, ok := networkBandwidthMbps(info); ok {
		attrs[v1alpha1.LabelInstanceNetworkBandwidth] = strconv.FormatInt(mbps, 10)
	}
	return attrs
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

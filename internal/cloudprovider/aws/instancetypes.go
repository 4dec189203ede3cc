package aws

import (
	"context"
	"slices"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/volumes"
)

// catalogType is what the catalogue keeps of an instance type Stratos can launch: all
// of it but what depends on a node class (ephemeral storage, zones, prices).
type catalogType struct {
	name string
	// arch is amd64 or arm64.
	arch  string
	vcpus int64
	pods  int64
	// capacity is the Node's capacity but for ephemeral storage, which the node class's
	// root volume sets.
	capacity   corev1.ResourceList
	attributes map[string]string
	// capacityTypes are on-demand and spot, those of them the type is sold as.
	capacityTypes []string
	// zones that offer the type.
	zones map[string]bool
	// estimate is the estimated on-demand price, for when the Pricing API has not answered.
	estimate float64
	// hibernation tells whether the type can hibernate.
	hibernation bool
	// ebsAttachments is how many EBS volumes the type can attach, the root volume
	// included (see ebsAttachLimit).
	ebsAttachments int64
}

// typeCatalog is the region's launchable instance types, ordered by name.
type typeCatalog []*catalogType

// describeCatalog describes every instance type of the region and the zones that offer
// each, and keeps those Stratos can launch.
func describeCatalog(ctx context.Context, client *ec2.Client) (typeCatalog, error) {
	zones, err := describeOfferedZones(ctx, client)
	if err != nil {
		return nil, err
	}
	pages := ec2.NewDescribeInstanceTypesPaginator(client, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(100)})
	var types typeCatalog
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for i := range page.InstanceTypes {
			if t := newCatalogType(&page.InstanceTypes[i], zones[string(page.InstanceTypes[i].InstanceType)]); t != nil {
				types = append(types, t)
			}
		}
	}
	sort.Slice(types, func(a, b int) bool { return types[a].name < types[b].name })
	return types, nil
}

// describeOfferedZones lists the zones that offer each instance type.
func describeOfferedZones(ctx context.Context, client *ec2.Client) (map[string]map[string]bool, error) {
	pages := ec2.NewDescribeInstanceTypeOfferingsPaginator(client, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: ec2types.LocationTypeAvailabilityZone,
		MaxResults:   aws.Int32(1000),
	})
	zones := map[string]map[string]bool{}
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, offering := range page.InstanceTypeOfferings {
			name, zone := string(offering.InstanceType), aws.ToString(offering.Location)
			if zones[name] == nil {
				zones[name] = map[string]bool{}
			}
			zones[name][zone] = true
		}
	}
	return zones, nil
}

// newCatalogType returns what the catalogue keeps of a type offered in zones, or nil for
// a type Stratos does not launch: one no zone offers, one that is neither on-demand nor
// spot (capacity blocks), one of another architecture than x86_64 and arm64 (Mac
// instances), one that cannot boot an HVM image from EBS (as AL2023 and Bottlerocket
// are, and as stopping and starting needs), and one whose network gives pods no
// addresses. Bare-metal and previous-generation types are kept: pools exclude them with
// the hypervisor and generation labels.
func newCatalogType(info *ec2types.InstanceTypeInfo, zones map[string]bool) *catalogType {
	arch := kubernetesArch(info)
	capacityTypes := usageClasses(info)
	pods := maxPods(info)
	switch {
	case len(zones) == 0, arch == "", len(capacityTypes) == 0, pods <= 0,
		vcpus(info) <= 0, memoryMiB(info) <= 0,
		!slices.Contains(info.SupportedVirtualizationTypes, ec2types.VirtualizationTypeHvm),
		!slices.Contains(info.SupportedRootDeviceTypes, ec2types.RootDeviceTypeEbs):
		return nil
	}
	return &catalogType{
		name:           string(info.InstanceType),
		arch:           arch,
		vcpus:          vcpus(info),
		pods:           pods,
		capacity:       nodeCapacity(info, pods),
		attributes:     instanceAttributes(info),
		capacityTypes:  capacityTypes,
		zones:          zones,
		estimate:       estimateOnDemandPrice(info, arch),
		hibernation:    aws.ToBool(info.HibernationSupported),
		ebsAttachments: ebsAttachments(info),
	}
}

// kubernetesArch is the architecture of the type as Kubernetes names it: amd64 for
// x86_64 (types that also run i386 included), arm64, or empty for any other.
func kubernetesArch(info *ec2types.InstanceTypeInfo) string {
	if info.ProcessorInfo == nil {
		return ""
	}
	archs := info.ProcessorInfo.SupportedArchitectures
	switch {
	case slices.Contains(archs, ec2types.ArchitectureTypeX8664):
		return "amd64"
	case slices.Contains(archs, ec2types.ArchitectureTypeArm64):
		return "arm64"
	}
	return ""
}

// usageClasses are the capacity types the type is sold as, on-demand first.
func usageClasses(info *ec2types.InstanceTypeInfo) []string {
	var out []string
	if slices.Contains(info.SupportedUsageClasses, ec2types.UsageClassTypeOnDemand) {
		out = append(out, v1beta1.CapacityTypeOnDemand)
	}
	if slices.Contains(info.SupportedUsageClasses, ec2types.UsageClassTypeSpot) {
		out = append(out, v1beta1.CapacityTypeSpot)
	}
	return out
}

// defaultEBSAttachments is what the EBS CSI driver assumes of a type EC2 does not
// describe: the shared limit of Nitro instances, less the primary network interface.
const defaultEBSAttachments = 27

// ebsAttachments is the most EBS volumes the type attaches, as DescribeInstanceTypes
// says (EbsInfo.MaximumEbsAttachments).
func ebsAttachments(info *ec2types.InstanceTypeInfo) int64 {
	if info.EbsInfo != nil && aws.ToInt32(info.EbsInfo.MaximumEbsAttachments) > 0 {
		return int64(aws.ToInt32(info.EbsInfo.MaximumEbsAttachments))
	}
	return defaultEBSAttachments
}

// ebsAttachLimit estimates the EBS CSI driver's attach limit on a node of the type whose
// node class attaches disks at launch, before the node's CSINode publishes the real one:
// the type's attachments less the node class's own volumes (the root volume at least),
// as the driver computes it (kubernetes-sigs/aws-ebs-csi-driver, getVolumesLimit). On
// types whose limit is shared with network interfaces, each interface the VPC CNI adds
// later takes one more; only the CSINode shows that.
func ebsAttachLimit(attachments, disks int64) map[string]int64 {
	return map[string]int64{volumes.EBSDriver: max(attachments-max(disks, 1), 1)}
}

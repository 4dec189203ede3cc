package aws

import (
	"maps"
	"slices"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// defaultVolumeType is the type of a volume the node class does not type, as the CRD
// defaults it, and the type assumed for the image's own volumes.
const defaultVolumeType = "gp3"

// imageDisks are the volumes an image family's instances get when the node class does
// not map the device: AL2023 (and a custom image, assumed alike) boots from a 20 GiB
// /dev/xvda; Bottlerocket has a 4 GiB OS volume and a 20 GiB data volume. Their types
// are assumed gp3 (an image that maps gp2 costs a quarter more).
func imageDisks(family string) map[string]cloudprovider.Disk {
	data := cloudprovider.Disk{VolumeType: defaultVolumeType, GiB: float64(DefaultEphemeralStorage.Value()) / (1 << 30)}
	if family == FamilyBottlerocket {
		return map[string]cloudprovider.Disk{"/dev/xvda": {VolumeType: defaultVolumeType, GiB: 4}, "/dev/xvdb": data}
	}
	return map[string]cloudprovider.Disk{"/dev/xvda": data}
}

// classDisks are the volumes an instance of the node class has: the image's own, with
// the class's block device mappings laid over them by device name, as EC2 merges a
// launch template's mappings with the image's. A mapping that does not size its volume
// keeps the image's size, or DefaultEphemeralStorage for a device the image lacks.
func classDisks(class *v1beta1.EC2NodeClass) []cloudprovider.Disk {
	family := ""
	if len(class.Status.AMIs) > 0 {
		family = class.Status.AMIs[0].Family
	}
	disks := imageDisks(family)
	for _, m := range class.Spec.BlockDeviceMappings {
		d, ok := disks[m.DeviceName]
		if !ok {
			d = cloudprovider.Disk{GiB: float64(DefaultEphemeralStorage.Value()) / (1 << 30)}
		}
		d.VolumeType = m.EBS.VolumeType
		if d.VolumeType == "" {
			d.VolumeType = defaultVolumeType
		}
		if m.EBS.VolumeSize != nil {
			d.GiB = float64(gibibytes(*m.EBS.VolumeSize))
		}
		disks[m.DeviceName] = d
	}
	out := make([]cloudprovider.Disk, 0, len(disks))
	for _, device := range slices.Sorted(maps.Keys(disks)) {
		out = append(out, disks[device])
	}
	return out
}

// stoppedPricePerHour estimates what a stopped instance of the node class costs an hour:
// its volumes at us-east-1's EBS storage prices (cloudprovider.EBSPricesPerGiBMonth),
// without provisioned IOPS or throughput.
func stoppedPricePerHour(class *v1beta1.EC2NodeClass) (float64, error) {
	return cloudprovider.DisksPricePerHour(classDisks(class))
}

package aws

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// A stopped node costs its volumes: the image's own where the class maps none, the
// class's mappings over them by device name, at the GiB-month price of their type over
// 730 hours.
func TestStoppedPriceOfANodeClass(t *testing.T) {
	size := func(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
	class := func(family string, mappings ...v1beta1.BlockDeviceMapping) *v1beta1.EC2NodeClass {
		c := &v1beta1.EC2NodeClass{}
		c.Status.AMIs = []v1beta1.ResolvedAMI{{Family: family}}
		c.Spec.BlockDeviceMappings = mappings
		return c
	}
	const month = 730.0
	cases := []struct {
		name  string
		class *v1beta1.EC2NodeClass
		want  float64 // dollars an hour, worked by hand
	}{
		{"AL2023's own 20 GiB root", class(FamilyAL2023), 20 * 0.08 / month},
		{"Bottlerocket's OS and data volumes", class(FamilyBottlerocket), (4 + 20) * 0.08 / month},
		{"a larger gp3 root replaces the image's", class(FamilyAL2023,
			v1beta1.BlockDeviceMapping{DeviceName: "/dev/xvda", RootVolume: true, EBS: v1beta1.BlockDevice{VolumeSize: size("100Gi"), VolumeType: "gp3"}}), 100 * 0.08 / month},
		{"a gp2 root without a size keeps the image's size", class(FamilyAL2023,
			v1beta1.BlockDeviceMapping{DeviceName: "/dev/xvda", EBS: v1beta1.BlockDevice{VolumeType: "gp2"}}), 20 * 0.10 / month},
		{"an extra io2 volume adds its storage, not its IOPS", class(FamilyAL2023,
			v1beta1.BlockDeviceMapping{DeviceName: "/dev/xvdf", EBS: v1beta1.BlockDevice{VolumeSize: size("50Gi"), VolumeType: "io2", IOPS: ptrTo(int64(10000))}}), (20*0.08 + 50*0.125) / month},
		{"Bottlerocket's data volume resized, its OS volume kept", class(FamilyBottlerocket,
			v1beta1.BlockDeviceMapping{DeviceName: "/dev/xvdb", EBS: v1beta1.BlockDevice{VolumeSize: size("80Gi"), VolumeType: "gp3"}}), (4 + 80) * 0.08 / month},
		{"a size in decimal units rounds up to whole GiB", class(FamilyAL2023,
			v1beta1.BlockDeviceMapping{DeviceName: "/dev/xvda", EBS: v1beta1.BlockDevice{VolumeSize: size("30G"), VolumeType: "gp3"}}), 28 * 0.08 / month},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := stoppedPricePerHour(tc.class)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("$%.6f an hour, want $%.6f", got, tc.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

package cloudprovider

import (
	"math"
	"testing"
)

// A disk costs its GiB-month price by its size, over the 730 hours of a month; volumes
// add up, and a type without a price is an error rather than free.
func TestDisksPricePerHour(t *testing.T) {
	cases := []struct {
		name    string
		disks   []Disk
		want    float64
		wantErr bool
	}{
		{name: "no disk costs nothing", want: 0},
		// 20 GiB × $0.08 = $1.60 a month.
		{name: "the default root volume", disks: []Disk{{VolumeType: "gp3", GiB: 20}}, want: 1.60 / 730},
		// Bottlerocket: 4 GiB root and 20 GiB data, both gp3.
		{name: "two volumes add up", disks: []Disk{{VolumeType: "gp3", GiB: 4}, {VolumeType: "gp3", GiB: 20}}, want: 24 * 0.08 / 730},
		{name: "io2 costs its storage only", disks: []Disk{{VolumeType: "io2", GiB: 100}}, want: 12.5 / 730},
		{name: "cold hdd", disks: []Disk{{VolumeType: "sc1", GiB: 1000}}, want: 15.0 / 730},
		{name: "an unknown type", disks: []Disk{{VolumeType: "gp4", GiB: 20}}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DisksPricePerHour(tc.disks)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("got $%.6f an hour, want $%.6f", got, tc.want)
			}
		})
	}
}

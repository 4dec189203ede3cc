package cloudprovider

import "fmt"

// HoursPerMonth is the month AWS prices storage by: a GiB-month price is paid over 730
// hours.
const HoursPerMonth = 730

// EBSPricesPerGiBMonth are the list prices of EBS volumes in us-east-1, in US dollars per
// GiB-month of provisioned size, by volume type (aws.amazon.com/ebs/pricing, 2025).
// They are the storage part of the price only: provisioned IOPS (io1, io2, gp3 above
// 3000) and throughput (gp3 above 125 MiB/s), the I/O requests of standard volumes and
// snapshots are not counted, and other regions cost up to a third more. The standby
// cost built on them is an estimate for comparing standby with running nodes, not a
// bill.
var EBSPricesPerGiBMonth = map[string]float64{
	"gp3":      0.08,
	"gp2":      0.10,
	"io1":      0.125,
	"io2":      0.125,
	"st1":      0.045,
	"sc1":      0.015,
	"standard": 0.05,
}

// Disk is one volume of an instance: its type (as EBS names them) and provisioned size.
type Disk struct {
	VolumeType string
	GiB        float64
}

// DisksPricePerHour is the estimated hourly price of disks: what a stopped instance
// with them costs. A volume type the table does not know is an error, so that a new type
// is priced on purpose rather than as free.
func DisksPricePerHour(disks []Disk) (float64, error) {
	total := 0.0
	for _, d := range disks {
		price, ok := EBSPricesPerGiBMonth[d.VolumeType]
		if !ok {
			return 0, fmt.Errorf("no price for volume type %q", d.VolumeType)
		}
		total += price * d.GiB / HoursPerMonth
	}
	return total, nil
}

package aws

import (
	"math"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// Prices are estimated when AWS does not say: on demand while the Pricing API has not
// answered (it is served from us-east-1 only, which an operator in another region or
// behind a firewall may not reach, and moto does not serve it), spot when
// DescribeSpotPriceHistory lists nothing. An estimate only has to order the types as
// their prices do, so that the cheapest type that fits is chosen; docs/aws-catalog.md
// says how the figures were fitted.
const (
	// estimatePerVCPU and estimatePerGiB are dollars per hour, fitted to the us-east-1
	// on-demand prices of m5, c5 and r5 (m5.large: 2 vCPUs, 8 GiB, $0.096).
	estimatePerVCPU = 0.0348
	estimatePerGiB  = 0.0033
	// estimateArm64Share: Graviton types cost about 80% of their x86 peers (m6g.large
	// $0.077 against m5.large's $0.096).
	estimateArm64Share = 0.8
	// estimatePerAccelerator is dollars per hour for each GPU or Neuron device, the middle
	// of g4dn's T4 (about $0.33) and g5's A10G (about $0.81).
	estimatePerAccelerator = 0.5
	// estimateSpotShare of the on-demand price is a spot price's estimate: spot usually
	// sells at 60 to 70% off.
	estimateSpotShare = 0.35
)

// estimateOnDemandPrice is the estimated on-demand price of a type, in dollars per hour,
// for architecture arch (amd64 or arm64).
func estimateOnDemandPrice(info *ec2types.InstanceTypeInfo, arch string) float64 {
	price := estimatePerVCPU*float64(vcpus(info)) + estimatePerGiB*float64(memoryMiB(info))/1024
	if arch == "arm64" {
		price *= estimateArm64Share
	}
	for _, count := range accelerators(info) {
		price += estimatePerAccelerator * float64(count)
	}
	return roundPrice(price)
}

// estimateSpotPrice is the estimated spot price of a type whose on-demand price is onDemand.
func estimateSpotPrice(onDemand float64) float64 {
	return roundPrice(onDemand * estimateSpotShare)
}

// roundPrice rounds to a hundredth of a cent, as AWS lists prices.
func roundPrice(p float64) float64 { return math.Round(p*10000) / 10000 }

package aws

import (
	"math"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// A product document as the Pricing API's GetProducts lists it, trimmed to the parts the
// parser reads and a few it must ignore.
const m5LargePriceDocument = `{
  "product": {
    "productFamily": "Compute Instance",
    "attributes": {"instanceType": "m5.large", "regionCode": "us-east-1", "operatingSystem": "Linux", "tenancy": "Shared", "vcpu": "2"},
    "sku": "2WG3ZVDRBDM9AEKN"
  },
  "serviceCode": "AmazonEC2",
  "terms": {
    "OnDemand": {
      "2WG3ZVDRBDM9AEKN.JRTCKXETXF": {
        "priceDimensions": {
          "2WG3ZVDRBDM9AEKN.JRTCKXETXF.6YS6EN2CT7": {
            "unit": "Hrs",
            "endRange": "Inf",
            "description": "$0.096 per On Demand Linux m5.large Instance Hour",
            "pricePerUnit": {"USD": "0.0960000000"}
          }
        },
        "sku": "2WG3ZVDRBDM9AEKN",
        "effectiveDate": "2026-11-01T00:00:00Z"
      }
    },
    "Reserved": {
      "2WG3ZVDRBDM9AEKN.38NPMPTW36": {
        "priceDimensions": {
          "2WG3ZVDRBDM9AEKN.38NPMPTW36.2TG2D8R56U": {"unit": "Quantity", "pricePerUnit": {"USD": "500"}}
        }
      }
    }
  },
  "version": "20261101000000"
}`

func TestParsePriceListItem(t *testing.T) {
	name, price, err := parsePriceListItem(m5LargePriceDocument)
	if err != nil {
		t.Fatal(err)
	}
	if name != "m5.large" || price != 0.096 {
		t.Errorf("parsed %s at $%v, want m5.large at $0.096", name, price)
	}

	// A product without an hourly on-demand price has none, and is no error.
	name, price, err = parsePriceListItem(`{"product":{"attributes":{"instanceType":"m5.large"}},"terms":{"OnDemand":{"a":{"priceDimensions":{"b":{"unit":"Hrs","pricePerUnit":{"USD":"0.0000000000"}}}}}}}`)
	if err != nil || name != "m5.large" || price != 0 {
		t.Errorf("zero price: parsed %s at $%v (%v), want no price", name, price, err)
	}

	for _, bad := range []string{`not json`, `{"product":{"attributes":{"instanceType":"m5.large"}},"terms":{"OnDemand":{"a":{"priceDimensions":{"b":{"unit":"Hrs","pricePerUnit":{"USD":"cheap"}}}}}}}`} {
		if _, _, err := parsePriceListItem(bad); err == nil {
			t.Errorf("parsing %q did not fail", bad)
		}
	}
}

// The estimate is within 15% of the published us-east-1 on-demand prices of general,
// compute and memory types of both architectures, and of a GPU type within 25%.
func TestEstimateOnDemandPriceIsNearListPrices(t *testing.T) {
	for _, tt := range []struct {
		name      string
		arch      string
		vcpus     int32
		memoryMiB int64
		gpus      int32
		listPrice float64
		tolerance float64
	}{
		{"m5.large", "amd64", 2, 8192, 0, 0.096, 0.15},
		{"m5.4xlarge", "amd64", 16, 65536, 0, 0.768, 0.15},
		{"c5.xlarge", "amd64", 4, 8192, 0, 0.17, 0.15},
		{"r5.2xlarge", "amd64", 8, 65536, 0, 0.504, 0.15},
		{"m6g.large", "arm64", 2, 8192, 0, 0.077, 0.15},
		{"c6g.xlarge", "arm64", 4, 8192, 0, 0.136, 0.15},
		{"g4dn.2xlarge", "amd64", 8, 32768, 1, 0.752, 0.25},
	} {
		info := &ec2types.InstanceTypeInfo{
			VCpuInfo:   &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(tt.vcpus)},
			MemoryInfo: &ec2types.MemoryInfo{SizeInMiB: aws.Int64(tt.memoryMiB)},
		}
		if tt.gpus > 0 {
			info.GpuInfo = &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{Count: aws.Int32(tt.gpus), Manufacturer: aws.String("NVIDIA")}}}
		}
		got := estimateOnDemandPrice(info, tt.arch)
		if off := math.Abs(got-tt.listPrice) / tt.listPrice; off > tt.tolerance {
			t.Errorf("%s: estimated $%.4f, list price $%.4f: %.0f%% off", tt.name, got, tt.listPrice, off*100)
		}
	}
}

func TestEstimateSpotPrice(t *testing.T) {
	if got := estimateSpotPrice(0.096); got != 0.0336 {
		t.Errorf("spot estimate of $0.096 = $%v, want 35%%: $0.0336", got)
	}
}

package fake

import (
	"fmt"
	"hash/fnv"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// DefaultRegion is the region of the fake cloud unless Options say otherwise.
const DefaultRegion = "fake-1"

// DefaultZones returns the zones of the fake cloud unless Options say otherwise.
func DefaultZones() []string { return []string{"fake-1a", "fake-1b", "fake-1c"} }

// family is an EC2 instance family; its large size has 2 vCPUs and each size up doubles
// the machine and the price.
type family struct {
	name       string
	arch       string
	gibPerCPU  int64
	largePrice float64 // us-east-1 on-demand, dollars per hour
}

var families = []family{
	{name: "m5", arch: "amd64", gibPerCPU: 4, largePrice: 0.096},
	{name: "c5", arch: "amd64", gibPerCPU: 2, largePrice: 0.085},
	{name: "r5", arch: "amd64", gibPerCPU: 8, largePrice: 0.126},
	{name: "m6g", arch: "arm64", gibPerCPU: 4, largePrice: 0.077},
	{name: "c6g", arch: "arm64", gibPerCPU: 2, largePrice: 0.068},
}

// sizes carry EKS's max pods, which follow the ENI and IP limits of each size.
var sizes = []struct {
	name    string
	cpus    int64
	maxPods int64
}{
	{"large", 2, 29},
	{"xlarge", 4, 58},
	{"2xlarge", 8, 58},
	{"4xlarge", 16, 234},
	{"8xlarge", 32, 234},
}

// DefaultCatalog returns the default instance types, offered on demand and as spot in
// every default zone.
func DefaultCatalog() []*cloudprovider.InstanceType { return catalogFor(DefaultZones()) }

func catalogFor(zones []string) []*cloudprovider.InstanceType {
	var types []*cloudprovider.InstanceType
	for _, f := range families {
		for _, s := range sizes {
			name := f.name + "." + s.name
			onDemand := f.largePrice * float64(s.cpus/2)
			var offerings []cloudprovider.Offering
			for _, zone := range zones {
				offerings = append(offerings,
					cloudprovider.Offering{Zone: zone, CapacityType: v1alpha1.CapacityTypeOnDemand, PricePerHour: onDemand, Available: true},
					cloudprovider.Offering{Zone: zone, CapacityType: v1alpha1.CapacityTypeSpot, PricePerHour: spotPrice(name, zone, onDemand), Available: true},
				)
			}
			types = append(types, &cloudprovider.InstanceType{
				Name:         name,
				Architecture: f.arch,
				Capacity: corev1.ResourceList{
					corev1.ResourceCPU:              *resource.NewQuantity(s.cpus, resource.DecimalSI),
					corev1.ResourceMemory:           *resource.NewQuantity(s.cpus*f.gibPerCPU<<30, resource.BinarySI),
					corev1.ResourcePods:             *resource.NewQuantity(s.maxPods, resource.DecimalSI),
					corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
				},
				Overhead:  overhead(s.cpus, s.maxPods),
				Offerings: offerings,
			})
		}
	}
	return types
}

// spotPrice is 30 to 40% of the on-demand price, varying by type and zone as spot prices
// do, but the same on every run.
func spotPrice(typeName, zone string, onDemand float64) float64 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s", typeName, zone)
	share := 0.30 + float64(h.Sum32()%11)/100
	return math.Round(onDemand*share*10000) / 10000
}

// overhead is what EKS's bootstrap reserves for the kubelet, the system and evictions.
func overhead(cpus, maxPods int64) corev1.ResourceList {
	// CPU: 6% of the first core, 1% of the second, 0.5% of the third and fourth, 0.25%
	// of each core above four, counted in millicores.
	millis := 60.0
	if cpus >= 2 {
		millis += 10
	}
	millis += 5 * float64(min(max(cpus-2, 0), 2))
	millis += 2.5 * float64(max(cpus-4, 0))
	// Memory: 255 MiB plus 11 MiB per pod for the kubelet, 100 MiB eviction threshold.
	mebibytes := 255 + 11*maxPods + 100
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(int64(math.Round(millis)), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(mebibytes<<20, resource.BinarySI),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
	}
}

// offeringLabels are the labels a Node of type t bought as offering o carries.
func offeringLabels(region string, t *cloudprovider.InstanceType, o cloudprovider.Offering) map[string]string {
	labels := t.Labels(o)
	labels[corev1.LabelTopologyRegion] = region
	return labels
}

// copyInstanceType returns a deep copy of t.
func copyInstanceType(t *cloudprovider.InstanceType) *cloudprovider.InstanceType {
	c := *t
	c.Capacity = t.Capacity.DeepCopy()
	c.Overhead = t.Overhead.DeepCopy()
	c.Offerings = append([]cloudprovider.Offering(nil), t.Offerings...)
	return &c
}

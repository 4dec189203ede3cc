package fakecloud

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/volumes"
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
	// bandwidth8x is the 8xlarge's baseline network bandwidth in Mbps, which differs by
	// family; the smaller sizes share theirs (sizes).
	bandwidth8x int64
}

var families = []family{
	{name: "m5", arch: "amd64", gibPerCPU: 4, largePrice: 0.096, bandwidth8x: 10000},
	{name: "c5", arch: "amd64", gibPerCPU: 2, largePrice: 0.085, bandwidth8x: 10000},
	{name: "r5", arch: "amd64", gibPerCPU: 8, largePrice: 0.126, bandwidth8x: 10000},
	{name: "m6g", arch: "arm64", gibPerCPU: 4, largePrice: 0.077, bandwidth8x: 12000},
	{name: "c6g", arch: "arm64", gibPerCPU: 2, largePrice: 0.068, bandwidth8x: 12000},
}

// sizes carry EKS's max pods, which follow the ENI and IP limits of each size, and the
// baseline network bandwidth AWS publishes for these families (Mbps; 0: the family's).
var sizes = []struct {
	name      string
	cpus      int64
	maxPods   int64
	bandwidth int64
}{
	{"large", 2, 29, 750},
	{"xlarge", 4, 58, 1250},
	{"2xlarge", 8, 58, 2500},
	{"4xlarge", 16, 234, 5000},
	{"8xlarge", 32, 234, 0},
}

// gpuType is an instance type with GPUs, listed one by one: GPU families do not double
// with each size as the others do.
type gpuType struct {
	name          string
	cpus, gib     int64
	maxPods       int64
	gpus          int64
	gpuName       string
	price         float64 // us-east-1 on-demand, dollars per hour
	bandwidthMbps int64
}

// gpuTypes carry one NVIDIA T4 each, as nvidia.com/gpu.
var gpuTypes = []gpuType{
	{name: "g4dn.xlarge", cpus: 4, gib: 16, maxPods: 29, gpus: 1, gpuName: "t4", price: 0.526, bandwidthMbps: 5000},
	{name: "g4dn.2xlarge", cpus: 8, gib: 32, maxPods: 29, gpus: 1, gpuName: "t4", price: 0.752, bandwidthMbps: 10000},
}

// ResourceGPU is the extended resource the GPU types offer, as NVIDIA's device plugin
// names it.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// DefaultCatalog returns the default instance types, offered on demand and as spot in
// every default zone.
func DefaultCatalog() []*cloudprovider.InstanceType { return catalogFor(DefaultZones()) }

func catalogFor(zones []string) []*cloudprovider.InstanceType {
	var types []*cloudprovider.InstanceType
	for _, f := range families {
		for _, s := range sizes {
			bandwidth := s.bandwidth
			if bandwidth == 0 {
				bandwidth = f.bandwidth8x
			}
			facts := cloudprovider.InstanceFacts{Name: f.name + "." + s.name, VCPUs: s.cpus, MemoryMiB: s.cpus * f.gibPerCPU << 10, Hypervisor: "nitro", NetworkBandwidthMbps: bandwidth}
			types = append(types, newType(facts, f.arch, s.maxPods, f.largePrice*float64(s.cpus/2), zones))
		}
	}
	for _, g := range gpuTypes {
		facts := cloudprovider.InstanceFacts{Name: g.name, VCPUs: g.cpus, MemoryMiB: g.gib << 10, GPUs: g.gpus, GPUName: g.gpuName, Hypervisor: "nitro", NetworkBandwidthMbps: g.bandwidthMbps}
		t := newType(facts, "amd64", g.maxPods, g.price, zones)
		t.Capacity[ResourceGPU] = *resource.NewQuantity(g.gpus, resource.DecimalSI)
		types = append(types, t)
	}
	return types
}

// DiskGiB is the size of every fake instance's one volume, a gp3 volume like the root
// volume of EKS's AL2023 images: what a stopped fake instance costs
// (StoppedPricePerHour), and its ephemeral storage.
const DiskGiB = 20

// stoppedPricePerHour is what a stopped fake instance costs: its DiskGiB gp3 volume at
// us-east-1's price, about $0.0022 an hour.
var stoppedPricePerHour = func() float64 {
	price, err := cloudprovider.DisksPricePerHour([]cloudprovider.Disk{{VolumeType: "gp3", GiB: DiskGiB}})
	if err != nil {
		panic(err)
	}
	return price
}()

// newType is a type with these facts, sold on demand at onDemand dollars an hour and as
// spot, in every zone.
func newType(facts cloudprovider.InstanceFacts, arch string, maxPods int64, onDemand float64, zones []string) *cloudprovider.InstanceType {
	var offerings []cloudprovider.Offering
	for _, zone := range zones {
		offerings = append(offerings,
			cloudprovider.Offering{Zone: zone, CapacityType: v1beta1.CapacityTypeOnDemand, PricePerHour: onDemand, StoppedPricePerHour: stoppedPricePerHour, Available: true},
			cloudprovider.Offering{Zone: zone, CapacityType: v1beta1.CapacityTypeSpot, PricePerHour: spotPrice(facts.Name, zone, onDemand), StoppedPricePerHour: stoppedPricePerHour, Available: true},
		)
	}
	return &cloudprovider.InstanceType{
		Name:         facts.Name,
		Architecture: arch,
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU:              *resource.NewQuantity(facts.VCPUs, resource.DecimalSI),
			corev1.ResourceMemory:           *resource.NewQuantity(facts.MemoryMiB<<20, resource.BinarySI),
			corev1.ResourcePods:             *resource.NewQuantity(maxPods, resource.DecimalSI),
			corev1.ResourceEphemeralStorage: *resource.NewQuantity(DiskGiB<<30, resource.BinarySI),
		},
		Overhead:     overhead(facts.VCPUs, maxPods),
		Offerings:    offerings,
		Attributes:   facts.Attributes(),
		AttachLimits: map[string]int64{volumes.EBSDriver: ebsAttachLimit},
	}
}

// ebsAttachLimit is the EBS CSI driver's attach limit on every fake type, as on the
// Nitro types they imitate: EC2 describes 27 EBS attachments for them, and the root
// volume takes one. The fake kubelets publish it in each Node's CSINode.
const ebsAttachLimit = 26

// spotPrice is 30 to 40% of the on-demand price, varying by type and zone as spot prices
// do, but the same on every run.
func spotPrice(typeName, zone string, onDemand float64) float64 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s", typeName, zone)
	share := 0.30 + float64(h.Sum32()%11)/100
	return math.Round(onDemand*share*10000) / 10000
}

// overhead is what EKS's bootstrap keeps back for the kubelet and for evictions:
// kube-reserved CPU, memory and ephemeral storage, no system-reserved, and the
// memory.available eviction threshold. The fake's nodes keep no nodefs threshold back.
func overhead(cpus, maxPods int64) cloudprovider.Overhead {
	// CPU: 6% of the first core, 1% of the second, 0.5% of the third and fourth, 0.25%
	// of each core above four, counted in millicores.
	millis := 60.0
	if cpus >= 2 {
		millis += 10
	}
	millis += 5 * float64(min(max(cpus-2, 0), 2))
	millis += 2.5 * float64(max(cpus-4, 0))
	// Memory: 255 MiB plus 11 MiB per pod for the kubelet, 100 MiB eviction threshold.
	return cloudprovider.Overhead{
		KubeReserved: corev1.ResourceList{
			corev1.ResourceCPU:              *resource.NewMilliQuantity(int64(math.Round(millis)), resource.DecimalSI),
			corev1.ResourceMemory:           *resource.NewQuantity((255+11*maxPods)<<20, resource.BinarySI),
			corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
		},
		EvictionThreshold: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse("100Mi"),
		},
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
	c.Attributes = maps.Clone(t.Attributes)
	c.AttachLimits = maps.Clone(t.AttachLimits)
	return &c
}

package aws

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// catalogTest is what the catalogue's tests against moto share: the clients of one
// moto, which they only read, and a provider whose catalogue they only read. moto takes
// seconds to describe its 1263 instance types; the tests that count calls make a
// provider of their own.
type catalogTest struct {
	clients *Clients
	cloud   *Cloud
}

func TestCatalogAgainstMoto(t *testing.T) {
	clients, _ := newTestClients(t)
	shared, _ := newCountedCloud(clients, Options{})
	env := catalogTest{clients: clients, cloud: shared}
	for name, test := range map[string]func(*testing.T, catalogTest){
		"InstanceTypesOfAClass":             testInstanceTypesOfAClass,
		"MaxPodsOfMotoTypesMatchEKS":        testMaxPodsOfMotoTypesMatchEKS,
		"InstanceTypesFollowTheClassImages": testInstanceTypesFollowTheClassImages,
		"PricesFromMoto":                    testPricesFromMoto,
		"RefusedOfferingsAreUnavailable":    testRefusedOfferingsAreUnavailable,
		"HibernatingClassGetsTypesThatCan":  testHibernatingClassGetsTypesThatCan,
		"CallsDoNotGrowWithLoad":            testCallsDoNotGrowWithLoad,
		"CatalogRefresh":                    testCatalogRefresh,
	} {
		t.Run(name, func(t *testing.T) { test(t, env) })
	}
}

// catalogClass is a node class as node class resolution leaves it: subnets in zones,
// images of archs.
func catalogClass(name string, zones []string, archs ...string) *v1beta1.EC2NodeClass {
	class := &v1beta1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for n, zone := range zones {
		class.Status.Subnets = append(class.Status.Subnets, v1beta1.ResolvedSubnet{ID: fmt.Sprintf("subnet-%08d", n), Zone: zone})
	}
	for n, arch := range archs {
		class.Status.AMIs = append(class.Status.AMIs, v1beta1.ResolvedAMI{ID: fmt.Sprintf("ami-%08d", n), Architecture: arch, Family: "al2023"})
	}
	return class
}

// catalogOfferedZones is what moto says of where each type is offered, read by the test.
func catalogOfferedZones(t *testing.T, clients *Clients) map[string][]string {
	t.Helper()
	out, err := clients.EC2.DescribeInstanceTypeOfferings(context.Background(), &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone})
	if err != nil {
		t.Fatal(err)
	}
	zones := map[string][]string{}
	for _, o := range out.InstanceTypeOfferings {
		zones[string(o.InstanceType)] = append(zones[string(o.InstanceType)], *o.Location)
	}
	return zones
}

func typesByName(types []*cloudprovider.InstanceType) map[string]*cloudprovider.InstanceType {
	out := map[string]*cloudprovider.InstanceType{}
	for _, t := range types {
		out[t.Name] = t
	}
	return out
}

// A class with subnets in two zones and x86 images gets x86 types offered in those
// zones only, on demand and as spot, with m5.large as EC2 and EKS describe it.
func testInstanceTypesOfAClass(t *testing.T, env catalogTest) {
	cloud, clients := env.cloud, env.clients
	ctx := context.Background()
	zones := []string{"us-east-1a", "us-east-1b"}
	class := catalogClass("default", zones, "amd64")
	class.Spec.BlockDeviceMappings = []v1beta1.BlockDeviceMapping{{DeviceName: "/dev/xvda", RootVolume: true, EBS: v1beta1.BlockDevice{VolumeSize: quantityPtr(resource.MustParse("50Gi"))}}}
	types, err := cloud.InstanceTypes(ctx, class)
	if err != nil {
		t.Fatal(err)
	}
	if len(types) < 100 {
		t.Fatalf("%d instance types; want most of moto's catalogue", len(types))
	}
	offered := catalogOfferedZones(t, clients)
	for _, it := range types {
		if it.Architecture != "amd64" {
			t.Errorf("%s is %s; the class has amd64 images only", it.Name, it.Architecture)
		}
		for _, o := range it.Offerings {
			if !slices.Contains(zones, o.Zone) || !slices.Contains(offered[it.Name], o.Zone) {
				t.Errorf("%s is offered in %s: not a zone of the class's subnets that EC2 offers it in (%v)", it.Name, o.Zone, offered[it.Name])
			}
			if o.PricePerHour <= 0 {
				t.Errorf("%s %s in %s has no price", it.Name, o.CapacityType, o.Zone)
			}
		}
	}
	// A type offered in one of the class's zones only has offerings there only; one
	// offered in none of them is not listed.
	got := typesByName(types)
	for name, in := range offered {
		if !strings.HasPrefix(name, "m5.") && !strings.HasPrefix(name, "c5.") {
			continue
		}
		inClass := slices.DeleteFunc(slices.Clone(in), func(z string) bool { return !slices.Contains(zones, z) })
		it, listed := got[name]
		if len(inClass) == 0 && listed {
			t.Errorf("%s is listed though EC2 offers it only in %v", name, in)
		}
		if listed {
			var gotZones []string
			for _, o := range it.Offerings {
				if !slices.Contains(gotZones, o.Zone) {
					gotZones = append(gotZones, o.Zone)
				}
			}
			sort.Strings(gotZones)
			sort.Strings(inClass)
			if !slices.Equal(gotZones, inClass) {
				t.Errorf("%s is offered in %v, want %v", name, gotZones, inClass)
			}
		}
	}

	m5 := got["m5.large"]
	if m5 == nil {
		t.Fatal("m5.large is not listed")
	}
	// 2 vCPUs, 8 GiB less the VM's 7.5%, EKS's 29 pods, the class's 50Gi root volume.
	want := map[corev1.ResourceName]string{corev1.ResourceCPU: "2", corev1.ResourceMemory: "7577Mi", corev1.ResourcePods: "29", corev1.ResourceEphemeralStorage: "50Gi"}
	for name, q := range want {
		if got := m5.Capacity[name]; got.Cmp(resource.MustParse(q)) != 0 {
			t.Errorf("m5.large capacity %s = %s, want %s", name, got.String(), q)
		}
	}
	// 70m and 574Mi kube-reserved, 100Mi and 10% of 50Gi to eviction, 1Gi kube-reserved storage.
	want = map[corev1.ResourceName]string{corev1.ResourceCPU: "70m", corev1.ResourceMemory: "674Mi", corev1.ResourceEphemeralStorage: "6Gi"}
	for name, q := range want {
		if got := m5.Overhead.Total()[name]; got.Cmp(resource.MustParse(q)) != 0 {
			t.Errorf("m5.large overhead %s = %s, want %s", name, got.String(), q)
		}
	}
	if len(m5.Offerings) != 4 {
		t.Errorf("m5.large offerings = %+v, want on-demand and spot in 2 zones", m5.Offerings)
	}
	wantLabels := map[string]string{
		v1beta1.LabelInstanceFamily: "m5", v1beta1.LabelInstanceCategory: "m", v1beta1.LabelInstanceGeneration: "5",
		v1beta1.LabelInstanceSize: "large", v1beta1.LabelInstanceCPU: "2", v1beta1.LabelInstanceMemory: "8192",
		v1beta1.LabelInstanceHypervisor: "nitro",
	}
	for key, value := range wantLabels {
		if m5.Attributes[key] != value {
			t.Errorf("m5.large label %s = %q, want %q", key, m5.Attributes[key], value)
		}
	}
	if _, ok := m5.Attributes[v1beta1.LabelInstanceGPUCount]; ok {
		t.Errorf("m5.large has a GPU count label: %v", m5.Attributes)
	}
	// AWS publishes m5.large's baseline bandwidth as 0.75 Gbps ("up to 10").
	if got := m5.Attributes[v1beta1.LabelInstanceNetworkBandwidth]; got != "750" {
		t.Errorf("m5.large network bandwidth label = %q, want 750 (Mbps)", got)
	}

	g4dn := got["g4dn.xlarge"]
	if g4dn == nil {
		t.Fatal("g4dn.xlarge is not listed")
	}
	if gpus := g4dn.Capacity[resourceNvidiaGPU]; gpus.Value() != 1 || g4dn.Attributes[v1beta1.LabelInstanceGPUName] != "t4" || g4dn.Attributes[v1beta1.LabelInstanceGPUCount] != "1" {
		t.Errorf("g4dn.xlarge: %s nvidia.com/gpu, labels %v; want one T4", gpus.String(), g4dn.Attributes)
	}
}

// The max pods of types as moto describes them are those EKS publishes in
// eni-max-pods.txt.
func testMaxPodsOfMotoTypesMatchEKS(t *testing.T, env catalogTest) {
	cloud := env.cloud
	class := catalogClass("all", []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"}, "amd64", "arm64")
	types, err := cloud.InstanceTypes(context.Background(), class)
	if err != nil {
		t.Fatal(err)
	}
	got := typesByName(types)
	for name, want := range map[string]int64{
		"m5.large": 29, "t3.micro": 4, "t3a.small": 8, "m4.large": 20, "c5.18xlarge": 737,
		"m6g.medium": 8, "c7g.large": 29, "g5.48xlarge": 345, "inf1.xlarge": 38, "d3.xlarge": 10,
		"c6in.32xlarge": 394, "p5.48xlarge": 100,
	} {
		it := got[name]
		if it == nil {
			t.Errorf("%s is not listed", name)
			continue
		}
		if pods := it.Capacity[corev1.ResourcePods]; pods.Value() != want {
			t.Errorf("%s: %d max pods, EKS lists %d", name, pods.Value(), want)
		}
	}
}

// Only the architectures the class has images for; both when it has both.
func testInstanceTypesFollowTheClassImages(t *testing.T, env catalogTest) {
	cloud := env.cloud
	ctx := context.Background()
	zones := []string{"us-east-1a"}
	arm, err := cloud.InstanceTypes(ctx, catalogClass("arm", zones, "arm64"))
	if err != nil {
		t.Fatal(err)
	}
	both, err := cloud.InstanceTypes(ctx, catalogClass("both", zones, "arm64", "amd64"))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range arm {
		if it.Architecture != "arm64" {
			t.Errorf("%s is %s in the arm64 class", it.Name, it.Architecture)
		}
	}
	archs := map[string]int{}
	for _, it := range both {
		archs[it.Architecture]++
	}
	if archs["arm64"] != len(arm) || archs["amd64"] == 0 {
		t.Errorf("the class with both has %v types, the arm64 class %d", archs, len(arm))
	}
	if typesByName(arm)["m6g.large"] == nil || typesByName(both)["m5.large"] == nil || typesByName(both)["m6g.large"] == nil {
		t.Error("m6g.large and m5.large are not listed where their architecture is")
	}
}

// A class whose nodes hibernate gets the types EC2 says can hibernate, and only those.
func testHibernatingClassGetsTypesThatCan(t *testing.T, env catalogTest) {
	ctx := context.Background()
	class := catalogClass("hibernate", []string{"us-east-1a", "us-east-1b"}, "amd64", "arm64")
	class.Spec.Hibernate = true
	types, err := env.cloud.InstanceTypes(ctx, class)
	if err != nil {
		t.Fatal(err)
	}
	got := typesByName(types)
	sample := []ec2types.InstanceType{"m5.large", "c7g.large", "g4dn.xlarge", "t2.micro", "r5.2xlarge", "m6g.metal"}
	described, err := env.clients.EC2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: sample})
	if err != nil {
		t.Fatal(err)
	}
	can := 0
	for _, info := range described.InstanceTypes {
		name, hibernates := string(info.InstanceType), *info.HibernationSupported
		if _, listed := got[name]; listed != hibernates {
			t.Errorf("%s: listed %v, EC2 says it can hibernate: %v", name, listed, hibernates)
		}
		if hibernates {
			can++
		}
	}
	if can == 0 || can == len(sample) {
		t.Fatalf("%d of the %d sampled types can hibernate; the sample shows nothing", can, len(sample))
	}
}

// Without an emulated Pricing API, on-demand prices are the documented estimate; spot
// prices are those DescribeSpotPriceHistory lists for each zone.
func testPricesFromMoto(t *testing.T, env catalogTest) {
	cloud, clients := env.cloud, env.clients
	ctx := context.Background()
	types, err := cloud.InstanceTypes(ctx, catalogClass("default", []string{"us-east-1a", "us-east-1b"}, "amd64"))
	if err != nil {
		t.Fatal(err)
	}
	history, err := clients.EC2.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{InstanceTypes: []ec2types.InstanceType{"m5.large"}})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]float64{}
	for _, h := range history.SpotPriceHistory {
		p, err := strconv.ParseFloat(*h.SpotPrice, 64)
		if err != nil {
			t.Fatal(err)
		}
		listed[*h.AvailabilityZone] = p
	}
	m5 := typesByName(types)["m5.large"]
	for _, o := range m5.Offerings {
		switch o.CapacityType {
		case v1beta1.CapacityTypeOnDemand:
			// 2 vCPUs at $0.0348 and 8 GiB at $0.0033 (docs/aws.md).
			if o.PricePerHour != 0.0960 || !o.Available {
				t.Errorf("m5.large on demand in %s: $%v, available %v; want the estimate $0.0960", o.Zone, o.PricePerHour, o.Available)
			}
		case v1beta1.CapacityTypeSpot:
			if want, ok := listed[o.Zone]; !ok || o.PricePerHour != want || !o.Available {
				t.Errorf("m5.large spot in %s: $%v, available %v; moto lists $%v", o.Zone, o.PricePerHour, o.Available, want)
			}
		}
	}
}

// Classes that cannot have instance types get an error that says why.
func TestInstanceTypesOfClassesThatAreNotReady(t *testing.T) {
	cloud := New(Options{ClusterName: testCluster}, &Clients{})
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		class client.Object
		want  string
	}{
		{"another kind", &v1beta1.FakeNodeClass{}, "takes an EC2NodeClass, not *v1beta1.FakeNodeClass"},
		{"nil", (*v1beta1.EC2NodeClass)(nil), "takes an EC2NodeClass"},
		{"no images", catalogClass("no-images", []string{"us-east-1a"}), "EC2NodeClass no-images is not ready: no AMI"},
		{"no subnets", catalogClass("no-subnets", nil, "amd64"), "EC2NodeClass no-subnets is not ready: no subnet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cloud.InstanceTypes(ctx, tt.class)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// Offerings the cloud refused lately are unavailable in the answer of the provider that
// cloudprovider.New makes of the EC2 cloud, and the cached answer is left as it was.
func testRefusedOfferingsAreUnavailable(t *testing.T, env catalogTest) {
	cloud := env.cloud
	unavailable := cloudprovider.NewUnavailableOfferings(time.Minute, nil)
	provider := cloudprovider.New(cloud, cloudprovider.DefaultBatchOptions, unavailable)
	class := catalogClass("default", []string{"us-east-1a", "us-east-1b"}, "amd64")
	refused := cloudprovider.OfferingKey{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: v1beta1.CapacityTypeSpot}
	unavailable.Mark(refused, "test")
	types, err := provider.InstanceTypes(context.Background(), class)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range typesByName(types)["m5.large"].Offerings {
		key := cloudprovider.OfferingKey{InstanceType: "m5.large", Zone: o.Zone, CapacityType: o.CapacityType}
		if o.Available == (key == refused) {
			t.Errorf("%s: available %v", key, o.Available)
		}
	}
	direct, err := cloud.InstanceTypes(context.Background(), class)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range typesByName(direct)["m5.large"].Offerings {
		if !o.Available {
			t.Errorf("the EC2 cloud's own answer has %s %s in %s unavailable", "m5.large", o.CapacityType, o.Zone)
		}
	}
}

func quantityPtr(q resource.Quantity) *resource.Quantity { return &q }

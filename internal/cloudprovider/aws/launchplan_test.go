package aws

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// planClass is a node class resolved to an image per architecture and a subnet per zone.
func planClass() *v1beta1.EC2NodeClass {
	return &v1beta1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "plan"},
		Status: v1beta1.EC2NodeClassStatus{
			AMIs:    []v1beta1.ResolvedAMI{{ID: "ami-amd", Architecture: "amd64"}, {ID: "ami-arm", Architecture: "arm64"}},
			Subnets: []v1beta1.ResolvedSubnet{{ID: "subnet-a", Zone: zoneA}, {ID: "subnet-b", Zone: zoneB}, {ID: "subnet-a2", Zone: zoneA}},
		},
	}
}

// planOverrides lists a plan as "image: type subnet" in the order EC2 gets them.
func planOverrides(p *launchPlan) []string {
	var out []string
	for _, o := range p.overrides {
		out = append(out, o.ami.ID+": "+o.instanceType+" "+o.subnet.ID)
	}
	return out
}

func onDemandOnly() []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}}}
}

func TestPlanLaunch(t *testing.T) {
	all := []string{
		"ami-arm: m6g.large subnet-a", "ami-arm: m6g.large subnet-b",
		"ami-amd: m5.large subnet-a", "ami-amd: m5.large subnet-b",
		"ami-amd: m5.xlarge subnet-a", "ami-amd: m5.xlarge subnet-b",
	}
	for _, tc := range []struct {
		name         string
		req          cloudprovider.CreateRequest
		class        func(*v1beta1.EC2NodeClass)
		types        func([]*cloudprovider.InstanceType)
		wantCapacity string
		want         []string
	}{
		{name: "spot when the requirements allow it", wantCapacity: "spot", want: all},
		{name: "on-demand when they do not", req: cloudprovider.CreateRequest{Requirements: onDemandOnly()}, wantCapacity: "on-demand", want: all},
		{
			name:         "requests fit the allocatable",
			req:          cloudprovider.CreateRequest{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}},
			wantCapacity: "spot",
			want:         []string{"ami-amd: m5.xlarge subnet-a", "ami-amd: m5.xlarge subnet-b"},
		},
		{
			// 1.5 CPUs fit a 2-CPU type, not one whose kubelet keeps 1 CPU for the system.
			name: "requests fit the allocatable the kubelet configuration leaves",
			req: cloudprovider.CreateRequest{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
				Kubelet:  &v1beta1.KubeletConfiguration{SystemReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			},
			wantCapacity: "spot",
			want:         []string{"ami-amd: m5.xlarge subnet-a", "ami-amd: m5.xlarge subnet-b"},
		},
		{
			// A claim that asks for nothing, as a standby claim does, is still not
			// launched as a type whose kubelet keeps back all its memory.
			name: "no request, and types the kubelet configuration leaves no memory are left out",
			req: cloudprovider.CreateRequest{
				Kubelet: &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")}},
			},
			wantCapacity: "spot",
			want:         []string{"ami-amd: m5.xlarge subnet-a", "ami-amd: m5.xlarge subnet-b"},
		},
		{
			name: "requirements on zone and architecture",
			req: cloudprovider.CreateRequest{Requirements: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zoneB}},
				{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"arm64"}},
			}},
			wantCapacity: "spot",
			want:         []string{"ami-amd: m5.large subnet-b", "ami-amd: m5.xlarge subnet-b"},
		},
		{
			name: "offerings marked unavailable are left out",
			req: cloudprovider.CreateRequest{Unavailable: []cloudprovider.OfferingKey{
				{InstanceType: "m6g.large", Zone: zoneA, CapacityType: "spot"}, {InstanceType: "m5.large", Zone: zoneB, CapacityType: "spot"},
			}},
			wantCapacity: "spot",
			want:         []string{"ami-arm: m6g.large subnet-b", "ami-amd: m5.large subnet-a", "ami-amd: m5.xlarge subnet-a", "ami-amd: m5.xlarge subnet-b"},
		},
		{
			name: "no spot offering left: on-demand",
			types: func(types []*cloudprovider.InstanceType) {
				for _, t := range types {
					for i := range t.Offerings {
						if t.Offerings[i].CapacityType == "spot" {
							t.Offerings[i].Available = false
						}
					}
				}
			},
			wantCapacity: "on-demand",
			want:         all,
		},
		{
			name: "zones without a subnet and architectures without an image are left out",
			class: func(c *v1beta1.EC2NodeClass) {
				c.Status.Subnets = c.Status.Subnets[1:2]
				c.Status.AMIs = c.Status.AMIs[:1]
			},
			wantCapacity: "spot",
			want:         []string{"ami-amd: m5.large subnet-b", "ami-amd: m5.xlarge subnet-b"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class := planClass()
			if tc.class != nil {
				tc.class(class)
			}
			types := testInstanceTypes()
			if tc.types != nil {
				tc.types(types)
			}
			plan, err := planLaunch(class, &tc.req, types)
			if err != nil {
				t.Fatal(err)
			}
			if plan.capacityType != tc.wantCapacity {
				t.Fatalf("capacity type %s, want %s", plan.capacityType, tc.wantCapacity)
			}
			if got := planOverrides(plan); !slices.Equal(got, tc.want) {
				t.Fatalf("overrides\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// Of many types, the cheapest 60 go, each in both zones.
func TestPlanLaunchOffersTheCheapestTypes(t *testing.T) {
	var types []*cloudprovider.InstanceType
	for i := range 100 {
		it := testInstanceTypes()[0]
		it.Name = fmt.Sprintf("t%03d.large", i)
		for j := range it.Offerings {
			it.Offerings[j].PricePerHour = float64(100-i) / 100 // t099 is the cheapest
		}
		types = append(types, it)
	}
	plan, err := planLaunch(planClass(), &cloudprovider.CreateRequest{Requirements: onDemandOnly()}, types)
	if err != nil {
		t.Fatal(err)
	}
	overrides := planOverrides(plan)
	if len(overrides) != 2*maxInstanceTypes {
		t.Fatalf("%d overrides, want %d", len(overrides), 2*maxInstanceTypes)
	}
	for _, o := range overrides {
		var n int
		if _, err := fmt.Sscanf(strings.Fields(o)[1], "t%03d.large", &n); err != nil || n < 40 {
			t.Fatalf("override %q is not among the 60 cheapest types", o)
		}
	}
	if overrides[0] != "ami-amd: t099.large subnet-a" {
		t.Fatalf("first override %q, want the cheapest", overrides[0])
	}
}

func TestPlanLaunchSaysWhyNothingQualifies(t *testing.T) {
	tooBig := cloudprovider.CreateRequest{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}}
	allMarked := cloudprovider.CreateRequest{Requirements: onDemandOnly()}
	for _, t := range testInstanceTypes() {
		for _, o := range t.Offerings {
			allMarked.Unavailable = append(allMarked.Unavailable, t.Key(o))
		}
	}
	badRequirement := cloudprovider.CreateRequest{Requirements: []corev1.NodeSelectorRequirement{{Key: "x", Operator: corev1.NodeSelectorOpGt, Values: []string{"many"}}}}
	for _, tc := range []struct {
		name string
		req  cloudprovider.CreateRequest
		code cloudprovider.ErrorCode
		says string
	}{
		{"nothing fits", tooBig, cloudprovider.CodeInsufficientCapacity, "satisfies the requirements and requests"},
		{"everything is unavailable", allMarked, cloudprovider.CodeInsufficientCapacity, "all 6 offerings"},
		{"a requirement is invalid", badRequirement, cloudprovider.CodeInvalidParameter, "many"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planLaunch(planClass(), &tc.req, testInstanceTypes())
			var cloudErr *cloudprovider.Error
			if !errors.As(err, &cloudErr) || cloudErr.Code != tc.code || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("planLaunch error %v, want %s saying %q", err, tc.code, tc.says)
			}
		})
	}
}

// Sixty types in six zones would be 360 overrides; EC2 takes 300, the cheapest.
func TestPlanLaunchKeepsToEC2sLimitOfOverrides(t *testing.T) {
	class := planClass()
	class.Status.Subnets = nil
	var zones []string
	for i := range 6 {
		zone := fmt.Sprintf("us-east-1%c", 'a'+i)
		zones = append(zones, zone)
		class.Status.Subnets = append(class.Status.Subnets, v1beta1.ResolvedSubnet{ID: "subnet-" + zone, Zone: zone})
	}
	var types []*cloudprovider.InstanceType
	for i := range maxInstanceTypes {
		it := testInstanceTypes()[0]
		it.Name = fmt.Sprintf("t%03d.large", i)
		it.Offerings = nil
		for z, zone := range zones {
			it.Offerings = append(it.Offerings, cloudprovider.Offering{Zone: zone, CapacityType: "on-demand", PricePerHour: float64(i*10 + z), Available: true})
		}
		types = append(types, it)
	}
	plan, err := planLaunch(class, &cloudprovider.CreateRequest{}, types)
	if err != nil {
		t.Fatal(err)
	}
	overrides := planOverrides(plan)
	if len(overrides) != maxOverrides {
		t.Fatalf("%d overrides, want %d", len(overrides), maxOverrides)
	}
	// Prices rise with the type's number and then the zone's: the 300 cheapest are the
	// first 50 types in every zone.
	if last := overrides[len(overrides)-1]; last != "ami-amd: t049.large subnet-us-east-1f" {
		t.Fatalf("last override %q, want the 300th cheapest", last)
	}
}

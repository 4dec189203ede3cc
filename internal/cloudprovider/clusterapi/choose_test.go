package clusterapi

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// The catalogue of the choice tests: a small type in two zones, a large one dearer, and
// an arm64 one cheapest of all.
func chooseCatalog(t *testing.T) []*cloudprovider.InstanceType {
	t.Helper()
	arm := stated("arm.large", "2", "8Gi", "0.05", "a", "b")
	arm.Architecture = "arm64"
	types, err := InstanceTypesOf(classOf(
		stated("small", "2", "8Gi", "0.10", "b", "a"),
		stated("large", "8", "32Gi", "0.40", "a", "b"),
		arm,
	))
	if err != nil {
		t.Fatal(err)
	}
	return types
}

func TestChoose(t *testing.T) {
	amd64 := []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	for _, tt := range []struct {
		name     string
		req      cloudprovider.CreateRequest
		wantType string
		wantZone string
	}{
		{name: "the cheapest of all", wantType: "arm.large", wantZone: "a"},
		{name: "the cheapest that meets the requirements, first zone on a tie",
			req: cloudprovider.CreateRequest{Requirements: amd64}, wantType: "small", wantZone: "a"},
		{name: "the cheapest whose allocatable fits the requests",
			req:      cloudprovider.CreateRequest{Requirements: amd64, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}},
			wantType: "large", wantZone: "a"},
		{name: "passing over offerings marked unavailable",
			req: cloudprovider.CreateRequest{Requirements: amd64, Unavailable: []cloudprovider.OfferingKey{
				{InstanceType: "small", Zone: "a", CapacityType: v1beta1.CapacityTypeOnDemand}}},
			wantType: "small", wantZone: "b"},
		{name: "in the zone the requirements name",
			req: cloudprovider.CreateRequest{Requirements: append(amd64, corev1.NodeSelectorRequirement{
				Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}})},
			wantType: "small", wantZone: "b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			chosen, offering, err := choose("metal", chooseCatalog(t), &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if chosen.Name != tt.wantType || offering.Zone != tt.wantZone || offering.CapacityType != v1beta1.CapacityTypeOnDemand {
				t.Errorf("chose %s on-demand in %s (%s), want %s in %s", chosen.Name, offering.Zone, offering.CapacityType, tt.wantType, tt.wantZone)
			}
		})
	}
}

// With nothing left, the launch is refused for capacity, so that the caller's
// unavailable offerings and its pool's fallbacks work as on the other clouds; the error
// says when offerings were passed over as unavailable.
func TestChooseNothingFits(t *testing.T) {
	spot := []corev1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeSpot}}}
	_, _, err := choose("metal", chooseCatalog(t), &cloudprovider.CreateRequest{Requirements: spot})
	if !errors.Is(err, cloudprovider.ErrInsufficientCapacity) {
		t.Fatalf("error %v, want InsufficientCapacity", err)
	}
	huge := &cloudprovider.CreateRequest{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Ti")}}
	if _, _, err := choose("metal", chooseCatalog(t), huge); !errors.Is(err, cloudprovider.ErrInsufficientCapacity) {
		t.Fatalf("error %v, want InsufficientCapacity", err)
	}
	var all []cloudprovider.OfferingKey
	for _, it := range chooseCatalog(t) {
		for _, o := range it.Offerings {
			all = append(all, it.Key(o))
		}
	}
	_, _, err = choose("metal", chooseCatalog(t), &cloudprovider.CreateRequest{Unavailable: all})
	var cloudErr *cloudprovider.Error
	if !errors.As(err, &cloudErr) || cloudErr.Code != cloudprovider.CodeInsufficientCapacity {
		t.Fatalf("error %v, want InsufficientCapacity", err)
	}
	if want := "marked unavailable"; !strings.Contains(cloudErr.Message, want) {
		t.Errorf("message %q does not say %q", cloudErr.Message, want)
	}
}

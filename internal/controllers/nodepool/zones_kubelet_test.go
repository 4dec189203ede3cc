package nodepool

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// A standby shape must fit a type as the pool's kubelet configuration leaves it: 3 CPUs
// fit a 4-CPU type in zone-a, not once its kubelet keeps 2 CPUs back, so only the
// 8-CPU type's zone-b is left.
func TestStandbyZonesHonourTheKubeletConfiguration(t *testing.T) {
	offer := func(zone string, price float64) []cloudprovider.Offering {
		return []cloudprovider.Offering{{Zone: zone, CapacityType: v1alpha1.CapacityTypeOnDemand, PricePerHour: price, Available: true}}
	}
	types := []*cloudprovider.InstanceType{
		{Name: "medium", Architecture: "amd64", Capacity: size("4", "16Gi"), Offerings: offer("zone-a", 0.2)},
		{Name: "large", Architecture: "amd64", Capacity: size("8", "32Gi"), Offerings: offer("zone-b", 0.4)},
	}
	pool := &v1alpha1.NodePool{}
	pool.Spec.Standby.Resources = size("3", "1Gi")
	zones, err := zonesForStandby(pool, types)
	if err != nil || len(zones) != 2 {
		t.Fatalf("zones %v (%v), want both without a kubelet configuration", zones, err)
	}
	pool.Spec.Template.Kubelet = &v1alpha1.KubeletConfiguration{KubeReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	zones, err = zonesForStandby(pool, types)
	if err != nil || len(zones) != 1 || zones["zone-b"] != 0.4 {
		t.Fatalf("zones %v (%v), want zone-b only", zones, err)
	}
}

package clusterapi

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// stated is an instance type as a class states it.
func stated(name, cpu, memory, price string, zones ...string) v1beta1.ClusterAPIInstanceType {
	return v1beta1.ClusterAPIInstanceType{
		Name:         name,
		Capacity:     corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
		Zones:        zones,
		PricePerHour: price,
	}
}

func classOf(types ...v1beta1.ClusterAPIInstanceType) *v1beta1.ClusterAPINodeClass {
	return &v1beta1.ClusterAPINodeClass{ObjectMeta: metav1.ObjectMeta{Name: "metal"}, Spec: v1beta1.ClusterAPINodeClassSpec{InstanceTypes: types}}
}

// A type the class states has its capacity with the kubelet's 110 pods, the other
// clouds' overhead estimate for its size, one available on-demand offering a zone at
// the stated prices, and the instance labels of its name and size with the class's
// labels, without a hypervisor the class does not state.
func TestInstanceTypesOf(t *testing.T) {
	spec := stated("m5.xlarge", "4", "16Gi", "0.192", "rack-a", "rack-b")
	spec.StoppedPricePerHour = "0.01"
	spec.Labels = map[string]string{"example.com/rack-class": "gold"}
	types, err := InstanceTypesOf(classOf(spec))
	if err != nil {
		t.Fatal(err)
	}
	if len(types) != 1 {
		t.Fatalf("%d types, want 1", len(types))
	}
	got := types[0]
	if got.Architecture != "amd64" {
		t.Errorf("architecture %q, want the default amd64", got.Architecture)
	}
	if pods := got.Capacity[corev1.ResourcePods]; pods.Value() != 110 {
		t.Errorf("pods capacity %s, want 110", pods.String())
	}
	// 4 vCPUs and 110 pods: 80m CPU and 255+11*110 = 1465Mi kube-reserved, 100Mi evictions.
	allocatable := got.Allocatable()
	if cpu := allocatable[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("3920m")) != 0 {
		t.Errorf("allocatable cpu %s, want 3920m", cpu.String())
	}
	if memory := allocatable[corev1.ResourceMemory]; memory.Cmp(resource.MustParse("14819Mi")) != 0 {
		t.Errorf("allocatable memory %s, want 14819Mi", memory.String())
	}
	want := []cloudprovider.Offering{
		{Zone: "rack-a", CapacityType: v1beta1.CapacityTypeOnDemand, PricePerHour: 0.192, StoppedPricePerHour: 0.01, Available: true},
		{Zone: "rack-b", CapacityType: v1beta1.CapacityTypeOnDemand, PricePerHour: 0.192, StoppedPricePerHour: 0.01, Available: true},
	}
	if len(got.Offerings) != len(want) {
		t.Fatalf("offerings %+v, want %+v", got.Offerings, want)
	}
	for i := range want {
		if got.Offerings[i] != want[i] {
			t.Errorf("offering %d = %+v, want %+v", i, got.Offerings[i], want[i])
		}
	}
	for key, value := range map[string]string{
		v1beta1.LabelInstanceFamily: "m5", v1beta1.LabelInstanceSize: "xlarge", v1beta1.LabelInstanceCPU: "4",
		v1beta1.LabelInstanceMemory: "16384", "example.com/rack-class": "gold",
	} {
		if got.Attributes[key] != value {
			t.Errorf("attribute %s = %q, want %q", key, got.Attributes[key], value)
		}
	}
	if _, ok := got.Attributes[v1beta1.LabelInstanceHypervisor]; ok {
		t.Errorf("attributes have a hypervisor the class does not state: %v", got.Attributes)
	}
}

// A stated pods capacity is the type's, and its overhead follows it.
func TestInstanceTypesOfStatedPods(t *testing.T) {
	spec := stated("small", "2", "4Gi", "0.05", "a")
	spec.Capacity[corev1.ResourcePods] = resource.MustParse("20")
	types, err := InstanceTypesOf(classOf(spec))
	if err != nil {
		t.Fatal(err)
	}
	if pods := types[0].Capacity[corev1.ResourcePods]; pods.Value() != 20 {
		t.Errorf("pods capacity %s, want 20", pods.String())
	}
	// 255+11*20 = 475Mi kube-reserved.
	if memory := types[0].Overhead.KubeReserved[corev1.ResourceMemory]; memory.Cmp(resource.MustParse("475Mi")) != 0 {
		t.Errorf("kube-reserved memory %s, want 475Mi", memory.String())
	}
}

// A price that does not parse (the CRD's pattern keeps them out) is an InvalidParameter
// error naming the type, not a crash.
func TestInstanceTypesOfBadPrice(t *testing.T) {
	_, err := InstanceTypesOf(classOf(stated("small", "2", "4Gi", "cheap", "a")))
	if !errors.Is(err, cloudprovider.ErrInvalidParameter) {
		t.Fatalf("error %v, want InvalidParameter", err)
	}
}

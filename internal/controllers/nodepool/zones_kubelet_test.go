package nodepool

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// A standby shape must fit a type as the pool's kubelet configuration leaves it: 3 CPUs
// fit a 4-CPU type in zone-a, not once its kubelet keeps 2 CPUs back, so only the
// 8-CPU type's zone-b is left.
func TestStandbyZonesHonourTheKubeletConfiguration(t *testing.T) {
	types := mediumInZoneALargeInZoneB()
	pool := &v1beta1.NodePool{}
	pool.Spec.Standby.Resources = size("3", "1Gi")
	zones, err := zonesForStandby(pool, types)
	if err != nil || len(zones) != 2 {
		t.Fatalf("zones %v (%v), want both without a kubelet configuration", zones, err)
	}
	pool.Spec.Template.Spec.Kubelet = &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	zones, err = zonesForStandby(pool, types)
	if err != nil || len(zones) != 1 || zones["zone-b"] != 0.4 {
		t.Fatalf("zones %v (%v), want zone-b only", zones, err)
	}
}

// A warm pool that asks for no room still never stands by on a type its kubelet
// leaves no memory: with 20Gi kept back the 16Gi medium is out, and with 40Gi every
// type is, which the pool reports instead of choosing the cheapest.
func TestAKubeletThatKeepsAllTheMemoryLeavesNoStandbyZone(t *testing.T) {
	types := mediumInZoneALargeInZoneB()
	pool := &v1beta1.NodePool{}
	pool.Spec.Template.Spec.Kubelet = &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("20Gi")}}
	zones, err := zonesForStandby(pool, types)
	if err != nil || len(zones) != 1 || zones["zone-b"] != 0.4 {
		t.Fatalf("zones %v (%v), want zone-b only", zones, err)
	}
	if msg, err := noInstanceTypeFits(pool, types); err != nil || msg != "" {
		t.Fatalf("noInstanceTypeFits = %q (%v) while large has room", msg, err)
	}

	pool.Spec.Template.Spec.Kubelet.KubeReserved[corev1.ResourceMemory] = resource.MustParse("40Gi")
	if zones, err := zonesForStandby(pool, types); err != nil || len(zones) != 0 {
		t.Fatalf("zones %v (%v), want none", zones, err)
	}
	msg, err := noInstanceTypeFits(pool, types)
	want := "spec.template.spec.kubelet leaves no CPU or memory for pods on any of the 2 instance types the pool's requirements allow: " +
		"its reservations and eviction thresholds keep back cpu 0 and memory 40Gi of the largest, large, which has cpu 8 and memory 32Gi"
	if err != nil || msg != want {
		t.Fatalf("noInstanceTypeFits = %q (%v), want %q", msg, err, want)
	}

	// With no type allowed at all, the requirements are the reason, not the kubelet.
	pool.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}
	want = "spec.template.spec.requirements allow none of the 2 instance types the node class offers"
	if msg, err := noInstanceTypeFits(pool, types); err != nil || msg != want {
		t.Fatalf("noInstanceTypeFits = %q (%v) with no type allowed at all, want %q", msg, err, want)
	}
}

// Every node Stratos launches runs linux: a kubernetes.io/os In [linux] requirement
// allows every type, and In [windows] none, which the pool reports as NoInstanceTypeFits
// naming the operating system.
func TestTheOSRequirementMatchesLinuxOnly(t *testing.T) {
	types := mediumInZoneALargeInZoneB()
	pool := &v1beta1.NodePool{}
	pool.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}}}
	if msg, err := noInstanceTypeFits(pool, types); err != nil || msg != "" {
		t.Fatalf("In [linux]: noInstanceTypeFits = %q (%v), want every type allowed", msg, err)
	}
	if zones, err := zonesForStandby(pool, types); err != nil || len(zones) != 2 {
		t.Fatalf("In [linux]: standby zones %v (%v), want both", zones, err)
	}

	pool.Spec.Template.Spec.Requirements[0].Values = []string{"windows"}
	msg, err := noInstanceTypeFits(pool, types)
	want := "spec.template.spec.requirements allow none of the 2 instance types the node class offers: every node Stratos launches runs linux, and kubernetes.io/os In [windows] rules it out"
	if err != nil || msg != want {
		t.Fatalf("In [windows]: noInstanceTypeFits = %q (%v), want %q", msg, err, want)
	}
	obs := observation{noTypeFits: msg}
	writeStatus(pool, obs)
	degraded := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded)
	if degraded == nil || degraded.Reason != ReasonNoInstanceTypeFits || !strings.Contains(degraded.Message, "kubernetes.io/os In [windows]") {
		t.Fatalf("In [windows]: Degraded = %+v, want NoInstanceTypeFits naming the requirement", degraded)
	}
}

// mediumInZoneALargeInZoneB is a 4-CPU, 16Gi type offered in zone-a and an 8-CPU, 32Gi
// one in zone-b, at twice the price.
func mediumInZoneALargeInZoneB() []*cloudprovider.InstanceType {
	offer := func(zone string, price float64) []cloudprovider.Offering {
		return []cloudprovider.Offering{{Zone: zone, CapacityType: v1beta1.CapacityTypeOnDemand, PricePerHour: price, Available: true}}
	}
	return []*cloudprovider.InstanceType{
		{Name: "medium", Architecture: "amd64", Capacity: size("4", "16Gi"), Offerings: offer("zone-a", 0.2)},
		{Name: "large", Architecture: "amd64", Capacity: size("8", "32Gi"), Offerings: offer("zone-b", 0.4)},
	}
}

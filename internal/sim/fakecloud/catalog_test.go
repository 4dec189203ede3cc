package fakecloud

import (
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

func TestDefaultCatalog(t *testing.T) {
	catalog := DefaultCatalog()
	if len(catalog) != 27 {
		t.Errorf("%d types, want 27: five families in five sizes and two GPU types", len(catalog))
	}
	names := map[string]bool{}
	for _, it := range catalog {
		if names[it.Name] {
			t.Errorf("%s listed twice", it.Name)
		}
		names[it.Name] = true
		if it.Architecture != "amd64" && it.Architecture != "arm64" {
			t.Errorf("%s: architecture %q", it.Name, it.Architecture)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
			capacity, ok := it.Capacity[r]
			if !ok || capacity.Sign() <= 0 {
				t.Errorf("%s: no %s capacity", it.Name, r)
				continue
			}
			allocatable := it.Allocatable()[r]
			if allocatable.Sign() <= 0 || (r != corev1.ResourcePods && allocatable.Cmp(capacity) >= 0) {
				t.Errorf("%s: %s allocatable %s of capacity %s", it.Name, r, allocatable.String(), capacity.String())
			}
		}
		offered := map[string]map[string]float64{}
		for _, o := range it.Offerings {
			if o.PricePerHour <= 0 || !o.Available {
				t.Errorf("%s in %s %s: price %v, available %v", it.Name, o.Zone, o.CapacityType, o.PricePerHour, o.Available)
			}
			if offered[o.Zone] == nil {
				offered[o.Zone] = map[string]float64{}
			}
			offered[o.Zone][o.CapacityType] = o.PricePerHour
		}
		for _, zone := range DefaultZones() {
			onDemand, spot := offered[zone][v1beta1.CapacityTypeOnDemand], offered[zone][v1beta1.CapacityTypeSpot]
			if onDemand == 0 || spot == 0 {
				t.Errorf("%s is not offered both ways in %s", it.Name, zone)
				continue
			}
			if share := spot / onDemand; share < 0.295 || share > 0.405 {
				t.Errorf("%s spot in %s costs %.0f%% of on-demand", it.Name, zone, share*100)
			}
		}
	}
}

func TestCatalogFigures(t *testing.T) {
	byName := map[string]int{}
	catalog := DefaultCatalog()
	for n, it := range catalog {
		byName[it.Name] = n
	}
	tests := []struct {
		name                 string
		cpu, memory, pods    string
		onDemand             float64
		cpuOverhead, memOver string
	}{
		{name: "m5.large", cpu: "2", memory: "8Gi", pods: "29", onDemand: 0.096, cpuOverhead: "70m", memOver: "674Mi"},
		{name: "c5.xlarge", cpu: "4", memory: "8Gi", pods: "58", onDemand: 0.17, cpuOverhead: "80m", memOver: "993Mi"},
		{name: "r5.2xlarge", cpu: "8", memory: "64Gi", pods: "58", onDemand: 0.504, cpuOverhead: "90m", memOver: "993Mi"},
		{name: "m6g.4xlarge", cpu: "16", memory: "64Gi", pods: "234", onDemand: 0.616, cpuOverhead: "110m", memOver: "2929Mi"},
		{name: "c6g.8xlarge", cpu: "32", memory: "64Gi", pods: "234", onDemand: 1.088, cpuOverhead: "150m", memOver: "2929Mi"},
		{name: "g4dn.xlarge", cpu: "4", memory: "16Gi", pods: "29", onDemand: 0.526, cpuOverhead: "80m", memOver: "674Mi"},
	}
	for _, tt := range tests {
		it := catalog[byName[tt.name]]
		for r, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: tt.cpu, corev1.ResourceMemory: tt.memory, corev1.ResourcePods: tt.pods} {
			if got := it.Capacity[r]; got.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s %s = %s, want %s", tt.name, r, got.String(), want)
			}
		}
		for r, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: tt.cpuOverhead, corev1.ResourceMemory: tt.memOver} {
			if got := it.Overhead.Total()[r]; got.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s %s overhead = %s, want %s", tt.name, r, got.String(), want)
			}
		}
		if o, _ := it.Cheapest(nil); it.Offerings[0].PricePerHour < tt.onDemand-1e-9 || it.Offerings[0].PricePerHour > tt.onDemand+1e-9 || o.CapacityType != v1beta1.CapacityTypeSpot {
			t.Errorf("%s on-demand $%v, cheapest %s", tt.name, it.Offerings[0].PricePerHour, o.CapacityType)
		}
	}
}

func TestCatalogAttributes(t *testing.T) {
	byName := map[string]*cloudprovider.InstanceType{}
	for _, it := range DefaultCatalog() {
		byName[it.Name] = it
		// Every type says what it is, and its numbers agree with its capacity.
		for _, key := range []string{v1beta1.LabelInstanceFamily, v1beta1.LabelInstanceCategory, v1beta1.LabelInstanceGeneration,
			v1beta1.LabelInstanceSize, v1beta1.LabelInstanceCPU, v1beta1.LabelInstanceMemory, v1beta1.LabelInstanceHypervisor,
			v1beta1.LabelInstanceNetworkBandwidth} {
			if it.Attributes[key] == "" {
				t.Errorf("%s has no %s", it.Name, key)
			}
		}
		cpu, memory := it.Capacity[corev1.ResourceCPU], it.Capacity[corev1.ResourceMemory]
		if it.Attributes[v1beta1.LabelInstanceCPU] != cpu.String() || it.Attributes[v1beta1.LabelInstanceMemory] != fmt.Sprint(memory.Value()>>20) {
			t.Errorf("%s: cpu %s, memory %s MiB; capacity %s, %s", it.Name, it.Attributes[v1beta1.LabelInstanceCPU], it.Attributes[v1beta1.LabelInstanceMemory], cpu.String(), memory.String())
		}
		gpus := it.Capacity[ResourceGPU]
		if count, ok := it.Attributes[v1beta1.LabelInstanceGPUCount]; ok != !gpus.IsZero() || (ok && count != gpus.String()) {
			t.Errorf("%s: GPU count label %q, capacity %s", it.Name, count, gpus.String())
		}
	}
	tests := []struct {
		name string
		want map[string]string
	}{
		{"m5.2xlarge", map[string]string{
			v1beta1.LabelInstanceFamily: "m5", v1beta1.LabelInstanceCategory: "m", v1beta1.LabelInstanceGeneration: "5",
			v1beta1.LabelInstanceSize: "2xlarge", v1beta1.LabelInstanceCPU: "8", v1beta1.LabelInstanceMemory: "32768",
			v1beta1.LabelInstanceHypervisor: "nitro", v1beta1.LabelInstanceNetworkBandwidth: "2500",
		}},
		{"c6g.8xlarge", map[string]string{
			v1beta1.LabelInstanceFamily: "c6g", v1beta1.LabelInstanceCategory: "c", v1beta1.LabelInstanceGeneration: "6",
			v1beta1.LabelInstanceSize: "8xlarge", v1beta1.LabelInstanceCPU: "32", v1beta1.LabelInstanceMemory: "65536",
			v1beta1.LabelInstanceHypervisor: "nitro", v1beta1.LabelInstanceNetworkBandwidth: "12000",
		}},
		{"g4dn.2xlarge", map[string]string{
			v1beta1.LabelInstanceFamily: "g4dn", v1beta1.LabelInstanceCategory: "g", v1beta1.LabelInstanceGeneration: "4",
			v1beta1.LabelInstanceSize: "2xlarge", v1beta1.LabelInstanceCPU: "8", v1beta1.LabelInstanceMemory: "32768",
			v1beta1.LabelInstanceGPUCount: "1", v1beta1.LabelInstanceGPUName: "t4",
			v1beta1.LabelInstanceHypervisor: "nitro", v1beta1.LabelInstanceNetworkBandwidth: "10000",
		}},
	}
	for _, tt := range tests {
		if got := byName[tt.name].Attributes; !maps.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

package clusterapi

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// DefaultMaxPods is the pods capacity of a type whose capacity does not give one: the
// kubelet's default maxPods, which a kubeadm node keeps.
const DefaultMaxPods = 110

// resourceNvidiaGPU is the extended resource NVIDIA's device plugin advertises; a type
// whose capacity lists it carries the GPU count label, as on the other clouds.
const resourceNvidiaGPU corev1.ResourceName = "nvidia.com/gpu"

// InstanceTypes are the types the class states, each offered on demand in each of its
// zones at the price the class gives. CAPI has no catalogue and no spot market, and
// whether a failure domain has room is learnt only by launching.
func (p *Provider) InstanceTypes(_ context.Context, nodeClass client.Object) ([]*cloudprovider.InstanceType, error) {
	class, err := asClass(nodeClass)
	if err != nil {
		return nil, err
	}
	return InstanceTypesOf(class)
}

// InstanceTypesOf are the instance types of a class (see Provider.InstanceTypes).
func InstanceTypesOf(class *v1beta1.ClusterAPINodeClass) ([]*cloudprovider.InstanceType, error) {
	types := make([]*cloudprovider.InstanceType, 0, len(class.Spec.InstanceTypes))
	for i := range class.Spec.InstanceTypes {
		t, err := instanceType(&class.Spec.InstanceTypes[i])
		if err != nil {
			return nil, cloudprovider.NewError(cloudprovider.CodeInvalidParameter, cloudprovider.OpInstanceTypes, "",
				"ClusterAPINodeClass %s: instance type %s: %v", class.Name, class.Spec.InstanceTypes[i].Name, err)
		}
		types = append(types, t)
	}
	return types, nil
}

// instanceType is the type a class states: its capacity (110 pods unless it says), the
// overhead the other clouds estimate for a kubelet of its size, one on-demand offering a
// zone, and the instance labels its name and capacity tell, with the class's labels.
func instanceType(spec *v1beta1.ClusterAPIInstanceType) (*cloudprovider.InstanceType, error) {
	onDemand, err := price(spec.PricePerHour)
	if err != nil {
		return nil, fmt.Errorf("pricePerHour: %w", err)
	}
	var stopped float64
	if spec.StoppedPricePerHour != "" {
		if stopped, err = price(spec.StoppedPricePerHour); err != nil {
			return nil, fmt.Errorf("stoppedPricePerHour: %w", err)
		}
	}
	capacity := spec.Capacity.DeepCopy()
	if capacity == nil {
		capacity = corev1.ResourceList{}
	}
	if _, ok := capacity[corev1.ResourcePods]; !ok {
		capacity[corev1.ResourcePods] = *resource.NewQuantity(DefaultMaxPods, resource.DecimalSI)
	}
	arch := spec.Architecture
	if arch == "" {
		arch = "amd64"
	}
	cpu, memory, pods := capacity[corev1.ResourceCPU], capacity[corev1.ResourceMemory], capacity[corev1.ResourcePods]
	offerings := make([]cloudprovider.Offering, 0, len(spec.Zones))
	for _, zone := range spec.Zones {
		offerings = append(offerings, cloudprovider.Offering{Zone: zone, CapacityType: v1beta1.CapacityTypeOnDemand,
			PricePerHour: onDemand, StoppedPricePerHour: stopped, Available: true})
	}
	return &cloudprovider.InstanceType{
		Name:         spec.Name,
		Architecture: arch,
		Capacity:     capacity,
		Overhead:     cloudprovider.EstimatedOverhead(cpu.Value(), pods.Value(), capacity[corev1.ResourceEphemeralStorage]),
		Offerings:    offerings,
		Attributes:   attributes(spec, cpu.Value(), memory.Value()>>20),
	}, nil
}

// attributes are the instance labels of a stated type: those its name reads as (family,
// size...), its CPUs, memory and GPUs, and the labels the class gives it. The hypervisor
// is left out: the class does not say, and an empty one would claim bare metal.
func attributes(spec *v1beta1.ClusterAPIInstanceType, vcpus, memoryMiB int64) map[string]string {
	gpus := spec.Capacity[resourceNvidiaGPU]
	attrs := cloudprovider.InstanceFacts{Name: spec.Name, VCPUs: vcpus, MemoryMiB: memoryMiB, GPUs: gpus.Value()}.Attributes()
	delete(attrs, v1beta1.LabelInstanceHypervisor)
	maps.Copy(attrs, spec.Labels)
	return attrs
}

// price parses a decimal price in dollars an hour, as the CRD's pattern admits them.
func price(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a price in dollars", s)
	}
	return v, nil
}

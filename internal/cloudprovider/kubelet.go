package cloudprovider

import (
	"maps"
	"math/big"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Overhead is what a node's kubelet keeps back from its capacity, in the parts the
// kubelet's configuration names, so that a pool's configuration can replace each one.
type Overhead struct {
	// KubeReserved is kept for Kubernetes' own daemons: the kubelet, the container runtime.
	KubeReserved corev1.ResourceList
	// SystemReserved is kept for the operating system's daemons.
	SystemReserved corev1.ResourceList
	// EvictionThreshold is what the kubelet's eviction thresholds keep free: memory for
	// memory.available, ephemeral-storage for nodefs.available.
	EvictionThreshold corev1.ResourceList
}

// Total is everything the overhead keeps back, by resource.
func (o Overhead) Total() corev1.ResourceList {
	return quota.Add(quota.Add(o.KubeReserved, o.SystemReserved), o.EvictionThreshold)
}

// DeepCopy returns a copy of o that shares nothing with it.
func (o Overhead) DeepCopy() Overhead {
	return Overhead{KubeReserved: o.KubeReserved.DeepCopy(), SystemReserved: o.SystemReserved.DeepCopy(), EvictionThreshold: o.EvictionThreshold.DeepCopy()}
}

// evictionSignals are the eviction signals whose thresholds the kubelet takes off
// allocatable, with the resource each takes from (the kubelet's hardEvictionReservation).
// The others (inodes, image filesystem, pids) measure nothing a pod requests.
var evictionSignals = map[string]corev1.ResourceName{
	"memory.available": corev1.ResourceMemory,
	"nodefs.available": corev1.ResourceEphemeralStorage,
}

// WithKubelet returns the type as a node of it reports itself when its kubelet runs with
// configuration k over the image's defaults: the pods capacity is k's maxPods when set;
// each resource of k's kubeReserved and systemReserved replaces the default for it; an
// evictionHard memory.available or nodefs.available threshold replaces the default
// threshold of its resource, and an evictionSoft one counts instead when it is larger,
// as Karpenter counts it, so that pods are not placed where they would be evicted once
// its grace period passes. Image GC thresholds change nothing. A nil k returns t itself;
// otherwise the result shares its offerings and attributes with t.
func (t *InstanceType) WithKubelet(k *v1beta1.KubeletConfiguration) *InstanceType {
	if k == nil {
		return t
	}
	c := *t
	c.Capacity = t.Capacity.DeepCopy()
	c.Overhead = t.Overhead.DeepCopy()
	if k.MaxPods != nil {
		c.Capacity[corev1.ResourcePods] = *resource.NewQuantity(int64(*k.MaxPods), resource.DecimalSI)
	}
	c.Overhead.KubeReserved = overridden(c.Overhead.KubeReserved, k.KubeReserved)
	c.Overhead.SystemReserved = overridden(c.Overhead.SystemReserved, k.SystemReserved)
	for signal, name := range evictionSignals {
		capacity, ok := c.Capacity[name]
		if !ok {
			continue
		}
		threshold, set := c.Overhead.EvictionThreshold[name]
		if hard, ok := thresholdQuantity(k.EvictionHard, signal, capacity); ok {
			threshold, set = hard, true
		}
		if soft, ok := thresholdQuantity(k.EvictionSoft, signal, capacity); ok && (!set || soft.Cmp(threshold) > 0) {
			threshold, set = soft, true
		}
		if set {
			if c.Overhead.EvictionThreshold == nil {
				c.Overhead.EvictionThreshold = corev1.ResourceList{}
			}
			c.Overhead.EvictionThreshold[name] = threshold
		}
	}
	return &c
}

// overridden is defaults with each resource of set in place of the default for it.
func overridden(defaults, set corev1.ResourceList) corev1.ResourceList {
	if len(set) == 0 {
		return defaults
	}
	out := maps.Clone(defaults)
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range set {
		out[name] = q.DeepCopy()
	}
	return out
}

// thresholdQuantity is the amount of capacity the threshold of signal in thresholds
// keeps free, and whether there is one: a quantity as it is, a percentage of the
// capacity rounded down. The kubelet ignores 0% and 100%, which keep nothing free. A
// threshold that does not parse (the CRD refuses those) counts as not set.
func thresholdQuantity(thresholds map[string]v1beta1.EvictionThreshold, signal string, capacity resource.Quantity) (resource.Quantity, bool) {
	value, ok := thresholds[signal]
	if !ok {
		return resource.Quantity{}, false
	}
	percent, isPercent := strings.CutSuffix(string(value), "%")
	if !isPercent {
		q, err := resource.ParseQuantity(string(value))
		return q, err == nil
	}
	if value == "0%" || value == "100%" {
		return *resource.NewQuantity(0, resource.BinarySI), true
	}
	// Exact decimal arithmetic: the kubelet's float32 differs by a few bytes at most.
	share, ok := new(big.Rat).SetString(percent)
	if !ok || share.Sign() < 0 {
		return resource.Quantity{}, false
	}
	share.Mul(share, big.NewRat(capacity.Value(), 100))
	bytes := new(big.Int).Quo(share.Num(), share.Denom())
	return *resource.NewQuantity(bytes.Int64(), resource.BinarySI), true
}

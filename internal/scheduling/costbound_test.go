package scheduling

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// This file computes the lower bound that packing quality is measured against: the
// cheapest way to buy room for the pods if nodes could be bought in fractions, each pod's
// CPU, memory and pod slot on offerings that pod accepts. Like the verifier, it uses
// nothing of the simulation's code.
//
// The bound is a linear program's optimum, read through its dual: a price per vCPU, per
// GiB and per pod slot for each class of pods (pods that accept the same offerings), such
// that no offering sells its allocatable for less than it costs at the dearest prices of
// the classes that accept it. Any such prices bound every placement from below: a node
// holds pods that all accept it, within its allocatable, so their requests at their
// classes' prices come to at most the node's price. The prices are found by column
// generation over a small revised simplex (gonum's solver neither gives the dual nor
// keeps up with thousands of offerings), and then checked against every offering and
// scaled down if any offering is undersold, so a numerical slip can only lower the bound.

// boundDims are what a pod takes of a node in the bound: vCPU, GiB and one pod slot.
const boundDims = 3

// boundOffering is an available offering: its node's labels and taints, what it holds,
// and its price.
type boundOffering struct {
	node        *corev1.Node
	allocatable [boundDims]float64
	price       float64
}

// boundClass is the pods that accept the same offerings, with their requests summed.
type boundClass struct {
	accepts []bool
	demand  [boundDims]float64
}

// boundOfferings lists the available offerings of pool ("": every pool) as nodes.
func boundOfferings(in Input, pool string) []boundOffering {
	var out []boundOffering
	for _, p := range in.Pools {
		if pool != "" && p.Pool.Name != pool {
			continue
		}
		var taints []corev1.Taint
		for _, t := range p.Pool.Spec.Template.Spec.Taints {
			taints = append(taints, t.Core())
		}
		for _, it := range p.InstanceTypes {
			a := it.Allocatable()
			allocatable := [boundDims]float64{float64(a.Cpu().MilliValue()) / 1000, float64(a.Memory().Value()) / (1 << 30), float64(a.Pods().Value())}
			for _, o := range it.Offerings {
				if !o.Available {
					continue
				}
				labels := it.Labels(o)
				for k, v := range p.Pool.Spec.Template.Labels {
					labels[k] = string(v)
				}
				labels[v1beta1.LabelNodePool] = p.Pool.Name
				node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
				out = append(out, boundOffering{node, allocatable, o.PricePerHour})
			}
		}
	}
	return out
}

// boundClasses groups pods by the offerings they accept (required node affinity and
// NoSchedule/NoExecute taints, as kube-scheduler filters them).
func boundClasses(pods []*corev1.Pod, offerings []boundOffering) []*boundClass {
	bySpec := map[string]*boundClass{}
	byAccepts := map[string]*boundClass{}
	var classes []*boundClass
	for _, pod := range pods {
		spec, _ := json.Marshal([]any{pod.Spec.NodeSelector, pod.Spec.Affinity, pod.Spec.Tolerations})
		c, ok := bySpec[string(spec)]
		if !ok {
			accepts := make([]bool, len(offerings))
			affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
			for j, o := range offerings {
				match, err := affinity.Match(o.node)
				_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), o.node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
					return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
				}, false)
				accepts[j] = err == nil && match && !untolerated
			}
			key, _ := json.Marshal(accepts)
			if c = byAccepts[string(key)]; c == nil {
				c = &boundClass{accepts: accepts}
				byAccepts[string(key)] = c
				classes = append(classes, c)
			}
			bySpec[string(spec)] = c
		}
		requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		c.demand[0] += float64(requests.Cpu().MilliValue()) / 1000
		c.demand[1] += float64(requests.Memory().Value()) / (1 << 30)
		c.demand[2]++
	}
	return classes
}

// fractionalBound is the optimum of the linear program over classes and offerings: the
// most the classes' demand is worth at prices (per class and dimension) under which no
// offering is undersold. Classes that accept no offering add nothing.
func fractionalBound(offerings []boundOffering, classes []*boundClass) float64 {
	var placeable []*boundClass
	for _, c := range classes {
		for _, ok := range c.accepts {
			if ok {
				placeable = append(placeable, c)
				break
			}
		}
	}
	if len(placeable) == 0 {
		return 0
	}
	prices := newCoveringSimplex(offerings, placeable).solve()
	// What the prices value every offering at, against what it costs.
	scale := 1.0
	for j, o := range offerings {
		if value := o.valueAt(placeable, j, prices); value > o.price {
			scale = min(scale, o.price/value)
		}
	}
	var bound float64
	for ci, c := range placeable {
		for d := range boundDims {
			bound += c.demand[d] * prices[boundDims*ci+d]
		}
	}
	return bound * scale
}

// dearest returns, per dimension, the highest price among the classes that accept
// offering j, and which class has it (-1: none accepts it).
func (o *boundOffering) dearest(classes []*boundClass, j int, prices []float64) (top [boundDims]float64, class [boundDims]int) {
	class = [boundDims]int{-1, -1, -1}
	for ci, c := range classes {
		if !c.accepts[j] {
			continue
		}
		for d := range boundDims {
			if p := prices[boundDims*ci+d]; class[d] < 0 || p > top[d] {
				top[d], class[d] = p, ci
			}
		}
	}
	return top, class
}

// valueAt is the offering's allocatable at the dearest prices of the classes that accept it.
func (o *boundOffering) valueAt(classes []*boundClass, j int, prices []float64) float64 {
	top, _ := o.dearest(classes, j, prices)
	var value float64
	for d := range boundDims {
		value += o.allocatable[d] * max(top[d], 0)
	}
	return value
}

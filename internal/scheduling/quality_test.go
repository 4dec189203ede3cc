package scheduling

import (
	"encoding/json"
	"math"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// This file measures packing quality: what the new capacity of a result costs per hour,
// against a lower bound no placement can beat. Like the verifier, it uses nothing of
// the simulation's code.

// launchCost is the hourly price of a result's launches.
func launchCost(r Result) float64 {
	var cost float64
	for _, l := range r.Launches {
		cost += l.PricePerHour
	}
	return cost
}

// launchCostBound is what the pods of a result's launches cost at least on new nodes of
// the pools they were launched in: per pool, the larger of two lower bounds, summed.
//
//   - Per pod: a node costs at least its allocatable CPU times the lowest price per
//     allocatable vCPU among the offerings of its pool that each of its pods accepts,
//     and likewise for memory and for room for pods; so the pool's pods cost at least
//     the largest of their CPU times those prices, summed, their memory times theirs,
//     and their count times the prices per pod.
//   - Fractional: the cheapest way to buy the pods' total CPU and memory if nodes of the
//     pool's offerings could be bought in fractions (fractionalCost); any packing buys
//     at least that much.
//
// The pool is the launch's: which pool takes a pod is the pools' weights and limits,
// the operator's choice, not packing; anyPool drops it, for a bound over every pool.
func launchCostBound(in Input, r Result, anyPool bool) float64 {
	type sums struct{ cpuCost, memoryCost, podCost, cpu, memory float64 }
	byPool := map[string]*sums{}
	cheapest := map[string][3]float64{}
	for _, l := range r.Launches {
		pool := l.Pool
		if anyPool {
			pool = ""
		}
		if byPool[pool] == nil {
			byPool[pool] = &sums{}
		}
		sum := byPool[pool]
		for _, pod := range l.Pods {
			key, _ := json.Marshal([]any{pool, pod.Spec.NodeSelector, pod.Spec.Affinity, pod.Spec.Tolerations})
			rates, ok := cheapest[string(key)]
			if !ok {
				rates = cheapestRates(in, pod, pool)
				cheapest[string(key)] = rates
			}
			requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
			cpu, memory := float64(requests.Cpu().MilliValue())/1000, float64(requests.Memory().Value())/(1<<30)
			sum.cpuCost += cpu * rates[0]
			sum.memoryCost += memory * rates[1]
			sum.podCost += rates[2]
			sum.cpu, sum.memory = sum.cpu+cpu, sum.memory+memory
		}
	}
	var bound float64
	for pool, sum := range byPool {
		bound += max(sum.cpuCost, sum.memoryCost, sum.podCost, fractionalCost(in, pool, sum.cpu, sum.memory))
	}
	return bound
}

// fractionalCost is the least that cpu vCPUs and memory GiB cost when nodes of the
// available offerings of pool ("": any) can be bought in fractions: a linear program
// with two constraints, whose optimum buys one type or two (a vertex).
func fractionalCost(in Input, pool string, cpu, memory float64) float64 {
	type offer struct{ cpu, memory, price float64 }
	var offers []offer
	for _, p := range in.Pools {
		if pool != "" && p.Pool.Name != pool {
			continue
		}
		for _, it := range p.InstanceTypes {
			if o, ok := it.Cheapest(nil); ok {
				a := it.Allocatable()
				offers = append(offers, offer{float64(a.Cpu().MilliValue()) / 1000, float64(a.Memory().Value()) / (1 << 30), o.PricePerHour})
			}
		}
	}
	best := math.Inf(1)
	for i, a := range offers {
		best = min(best, a.price*max(cpu/a.cpu, memory/a.memory))
		for _, b := range offers[i+1:] {
			// x·a + y·b buys exactly the CPU and the memory.
			det := a.cpu*b.memory - b.cpu*a.memory
			if det == 0 {
				continue
			}
			x, y := (cpu*b.memory-b.cpu*memory)/det, (a.cpu*memory-cpu*a.memory)/det
			if x >= 0 && y >= 0 {
				best = min(best, x*a.price+y*b.price)
			}
		}
	}
	return best
}

// cheapestRates returns the lowest price per allocatable vCPU and per allocatable GiB
// and per pod among the offerings of pool ("": any pool) whose node the pod accepts.
func cheapestRates(in Input, pod *corev1.Pod, pool string) [3]float64 {
	perCPU, perGiB, perPod := math.Inf(1), math.Inf(1), math.Inf(1)
	consider := func(node *corev1.Node, allocatable corev1.ResourceList, price float64) {
		if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); err != nil || !ok {
			return
		}
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, false); untolerated {
			return
		}
		if cpu := allocatable.Cpu().MilliValue(); cpu > 0 {
			perCPU = math.Min(perCPU, price/(float64(cpu)/1000))
		}
		if memory := allocatable.Memory().Value(); memory > 0 {
			perGiB = math.Min(perGiB, price/(float64(memory)/(1<<30)))
		}
		if pods := allocatable.Pods().Value(); pods > 0 {
			perPod = math.Min(perPod, price/float64(pods))
		}
	}
	for _, p := range in.Pools {
		if pool != "" && p.Pool.Name != pool {
			continue
		}
		var taints []corev1.Taint
		for _, t := range p.Pool.Spec.Template.Taints {
			taints = append(taints, t.Core())
		}
		for _, it := range p.InstanceTypes {
			for _, o := range it.Offerings {
				if !o.Available {
					continue
				}
				labels := it.Labels(o)
				for k, v := range p.Pool.Spec.Template.Labels {
					labels[k] = string(v)
				}
				labels[v1alpha1.LabelNodePool] = p.Pool.Name
				consider(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}, it.Allocatable(), o.PricePerHour)
			}
		}
	}
	return [3]float64{perCPU, perGiB, perPod}
}

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
// the pools they were launched in. A node costs at least its allocatable CPU times the
// lowest price per allocatable vCPU among the offerings of its pool that each of its
// pods accepts, and likewise for memory and for room for pods; so all the pods cost at
// least the largest of their CPU times those prices, summed, their memory times theirs,
// summed, and their count times the prices per pod, summed. The pool
// is the launch's: which pool takes a pod is the pools' weights and limits, the
// operator's choice, not packing; anyPool drops it, for a bound over every pool.
func launchCostBound(in Input, r Result, anyPool bool) float64 {
	cheapest := map[string][3]float64{}
	var cpuCost, memoryCost, podCost float64
	for _, l := range r.Launches {
		pool := l.Pool
		if anyPool {
			pool = ""
		}
		for _, pod := range l.Pods {
			key, _ := json.Marshal([]any{pool, pod.Spec.NodeSelector, pod.Spec.Affinity, pod.Spec.Tolerations})
			rates, ok := cheapest[string(key)]
			if !ok {
				rates = cheapestRates(in, pod, pool)
				cheapest[string(key)] = rates
			}
			requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
			cpuCost += float64(requests.Cpu().MilliValue()) / 1000 * rates[0]
			memoryCost += float64(requests.Memory().Value()) / (1 << 30) * rates[1]
			podCost += rates[2]
		}
	}
	return max(cpuCost, memoryCost, podCost)
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

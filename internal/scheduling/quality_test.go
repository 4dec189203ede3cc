package scheduling

import corev1 "k8s.io/api/core/v1"

// This file measures packing quality: what the new capacity of a result costs per hour,
// against a lower bound no placement can beat (costbound_test.go).

// launchCost is the hourly price of a result's launches.
func launchCost(r Result) float64 {
	var cost float64
	for _, l := range r.Launches {
		cost += l.PricePerHour
	}
	return cost
}

// launchCostBound is what the pods of a result's launches cost at least on new nodes of
// the pools they were launched in: per pool, the fractional bound over the pool's
// offerings, summed. The pool is the launch's: which pool takes a pod is the pools'
// weights and limits, the operator's choice, not packing.
func launchCostBound(in Input, r Result) float64 {
	byPool := map[string][]*corev1.Pod{}
	for _, l := range r.Launches {
		byPool[l.Pool] = append(byPool[l.Pool], l.Pods...)
	}
	var bound float64
	for pool, pods := range byPool {
		offerings := boundOfferings(in, pool)
		bound += fractionalBound(offerings, boundClasses(pods, offerings))
	}
	return bound
}

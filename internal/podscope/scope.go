// Package podscope decides which pending pods Stratos serves when another autoscaler
// (Karpenter, Cluster Autoscaler) may serve them too. Under the scope `all` Stratos
// serves every pod its pools could hold; under `opted-in` only pods that ask for its
// nodes. The scope `auto` is `all` until another autoscaler is found, then `opted-in`:
// installing Stratos beside Karpenter changes nothing until a workload opts in, and once
// the old autoscaler is gone Stratos serves every pod (docs/migrating.md).
package podscope

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Scope is the rule for the pending pods Stratos serves.
type Scope string

const (
	// All serves every unschedulable pod a pool could hold.
	All Scope = "all"
	// OptedIn serves only pods that opt in to Stratos (see OptsIn).
	OptedIn Scope = "opted-in"
	// Auto is All while no other autoscaler is found, OptedIn while one is.
	Auto Scope = "auto"
)

// Parse checks a --pod-scope value.
func Parse(s string) (Scope, error) {
	switch Scope(s) {
	case All, OptedIn, Auto:
		return Scope(s), nil
	}
	return "", fmt.Errorf("%q is not auto, all or opted-in", s)
}

// labelPrefix starts every label key Stratos puts on its nodes (stratos.sh/nodepool,
// stratos.sh/capacity-type, stratos.sh/instance-*): only Stratos's nodes carry them, so a
// pod that requires one cannot be meant for another autoscaler.
const labelPrefix = v1beta1.Group + "/"

// OptsIn reports whether pod asks for Stratos's nodes: its nodeSelector or a term of its
// required node affinity names a stratos.sh/ label key, or it tolerates one of
// poolTaints, the taints Stratos's pools put on their nodes. A toleration without a key
// (operator Exists) tolerates every taint, as DaemonSets' pods do, and says nothing about
// who should serve the pod, so it does not count. Preferred affinity does not count
// either: it is a wish, not a requirement another autoscaler could not meet.
func OptsIn(pod *corev1.Pod, poolTaints []corev1.Taint) bool {
	for key := range pod.Spec.NodeSelector {
		if strings.HasPrefix(key, labelPrefix) {
			return true
		}
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, expr := range term.MatchExpressions {
				if strings.HasPrefix(expr.Key, labelPrefix) {
					return true
				}
			}
		}
	}
	for i := range pod.Spec.Tolerations {
		toleration := &pod.Spec.Tolerations[i]
		// Comparison operators (Gt, Lt) off, as the scheduling simulation reads them.
		if toleration.Key == "" {
			continue // tolerates everything: not a choice of Stratos's nodes
		}
		for j := range poolTaints {
			if toleration.ToleratesTaint(klog.Background(), &poolTaints[j], false) {
				return true
			}
		}
	}
	return false
}

// PoolTaints returns the taints the pools put on their nodes for their whole life
// (template taints). Startup taints are left out: an agent removes them once the node is
// ready, and pods do not tolerate them to land on the pool.
func PoolTaints(pools []v1beta1.NodePool) []corev1.Taint {
	var out []corev1.Taint
	for i := range pools {
		for _, t := range pools[i].Spec.Template.Spec.Taints {
			out = append(out, t.Core())
		}
	}
	return out
}

// Filter returns the pods scope serves, given the taints of the pools: all of them under
// All, those that opt in under OptedIn.
func Filter(scope Scope, pods []*corev1.Pod, poolTaints []corev1.Taint) []*corev1.Pod {
	if scope != OptedIn {
		return pods
	}
	var out []*corev1.Pod
	for _, pod := range pods {
		if OptsIn(pod, poolTaints) {
			out = append(out, pod)
		}
	}
	return out
}

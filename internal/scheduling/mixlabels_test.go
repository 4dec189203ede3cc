package scheduling

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// With mixOptions.labels, some generated pods select on the instance labels and the
// dedicated pools keep minValues floors on the instance family.

// selectInstanceLabels adds to a pod's node selector, or to its required node affinity,
// one choice on the instance labels.
func (g *mixGen) selectInstanceLabels(sel map[string]string, required []corev1.NodeSelectorRequirement) []corev1.NodeSelectorRequirement {
	switch g.rng.IntN(4) {
	case 0:
		sel[v1beta1.LabelInstanceGeneration] = g.pick([]string{"6", "7"})
	case 1:
		required = append(required, corev1.NodeSelectorRequirement{Key: v1beta1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{g.pick([]string{"3", "7"})}})
	case 2:
		required = append(required, corev1.NodeSelectorRequirement{Key: v1beta1.LabelInstanceCategory, Operator: corev1.NodeSelectorOpIn, Values: []string{"c", "m"}})
	case 3:
		sel[v1beta1.LabelInstanceFamily] = g.pick([]string{"c6i", "m7g", "r6a", "m5"})
	}
	return required
}

// mixFloors gives the dedicated pools floors: three instance families for batch, two for
// highmem.
func mixFloors(pools []Pool) {
	for i, minValues := range map[int]int32{0: 2, 2: 3} {
		pool := pools[i].Pool.DeepCopy()
		pool.Spec.Template.Spec.Requirements = append(pool.Spec.Template.Spec.Requirements, v1beta1.NodeSelectorRequirement{
			Key: v1beta1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpExists, MinValues: &minValues})
		pools[i].Pool = pool
	}
}

// mixMeetsFloors reports whether the types of these labels meet the pool's floors.
func mixMeetsFloors(p Pool, types []map[string]string) bool {
	for _, r := range p.Pool.Spec.Template.Spec.Requirements {
		if r.MinValues == nil {
			continue
		}
		values := map[string]bool{}
		for _, labels := range types {
			if v, ok := labels[r.Key]; ok {
				values[v] = true
			}
		}
		if len(values) < int(*r.MinValues) {
			return false
		}
	}
	return true
}

// selectsInstanceLabels reports whether a pod's node selector or required node affinity
// names an instance label.
func selectsInstanceLabels(pod *corev1.Pod) bool {
	for _, key := range v1beta1.InstanceLabelKeys {
		if _, ok := pod.Spec.NodeSelector[key]; ok {
			return true
		}
		if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				if slices.ContainsFunc(term.MatchExpressions, func(r corev1.NodeSelectorRequirement) bool { return r.Key == key }) {
					return true
				}
			}
		}
	}
	return false
}

package nodepool

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// ReasonNoInstanceTypeFits: the template's kubelet configuration keeps back all the CPU
// or memory of every instance type the pool's requirements allow, so no node is made.
const ReasonNoInstanceTypeFits = "NoInstanceTypeFits"

// kubeletLeavesNoType says why no instance type the pool's template allows would leave
// CPU and memory for pods under the template's kubelet configuration, naming the
// largest type and what is kept back of it; "" when one would, or when the template
// allows none at all (that is for noStandbyMessage and provisioning to say). Without
// this the warm pool would ask the cloud for a node no pod can use, or, where the
// cloud skips such types, wait without saying why.
func kubeletLeavesNoType(pool *v1beta1.NodePool, types []*cloudprovider.InstanceType) (string, error) {
	requirements := v1beta1.CoreRequirements(pool.Spec.Template.Spec.Requirements)
	var allowed []*cloudprovider.InstanceType
	for _, t := range types {
		for _, o := range t.Offerings {
			ok, err := cloudprovider.Satisfies(t, o, requirements)
			if err != nil {
				return "", err
			}
			if ok {
				allowed = append(allowed, t)
				break
			}
		}
	}
	if len(allowed) == 0 {
		return "", nil
	}
	for _, t := range allowed {
		if t.WithKubelet(pool.Spec.Template.Spec.Kubelet).LeavesRoomForPods() {
			return "", nil
		}
	}
	largest := slices.MaxFunc(allowed, func(a, b *cloudprovider.InstanceType) int {
		return cmp.Or(a.Capacity.Memory().Cmp(*b.Capacity.Memory()), a.Capacity.Cpu().Cmp(*b.Capacity.Cpu()), cmp.Compare(b.Name, a.Name))
	})
	kept := largest.WithKubelet(pool.Spec.Template.Spec.Kubelet).Overhead.Total()
	return fmt.Sprintf("spec.template.kubelet leaves no CPU or memory for pods on any of the %d instance types the pool's requirements allow: "+
		"its reservations and eviction thresholds keep back cpu %s and memory %s of the largest, %s, which has cpu %s and memory %s",
		len(allowed), quantity(kept, corev1.ResourceCPU), quantity(kept, corev1.ResourceMemory),
		largest.Name, quantity(largest.Capacity, corev1.ResourceCPU), quantity(largest.Capacity, corev1.ResourceMemory)), nil
}

// quantity is the amount of name in list, 0 when it is not there.
func quantity(list corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := list[name]
	if !ok {
		return "0"
	}
	return q.String()
}

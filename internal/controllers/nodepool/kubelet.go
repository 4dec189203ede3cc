package nodepool

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// ReasonNoInstanceTypeFits: the template's requirements allow none of the node class's
// instance types, or its kubelet configuration keeps back all the CPU or memory of
// every one they allow, so no node is made.
const ReasonNoInstanceTypeFits = "NoInstanceTypeFits"

// noInstanceTypeFits says why no instance type the pool's template allows would make a
// node: its requirements allow none of types (a kubernetes.io/os other than linux, say,
// as every node Stratos launches is linux), or none would leave CPU and memory for pods
// under the template's kubelet configuration, naming the largest type and what is kept
// back of it. "" when one would, or when types is empty (the node class offers nothing:
// that is for noStandbyMessage and provisioning to say). Without this the warm pool
// would ask the cloud for a node no pod can use, or, where the cloud skips such types,
// wait without saying why.
func noInstanceTypeFits(pool *v1beta1.NodePool, types []*cloudprovider.InstanceType) (string, error) {
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
		if len(types) == 0 {
			return "", nil
		}
		return requirementsAllowNone(pool, len(types)), nil
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
	return fmt.Sprintf("spec.template.spec.kubelet leaves no CPU or memory for pods on any of the %d instance types the pool's requirements allow: "+
		"its reservations and eviction thresholds keep back cpu %s and memory %s of the largest, %s, which has cpu %s and memory %s",
		len(allowed), quantity(kept, corev1.ResourceCPU), quantity(kept, corev1.ResourceMemory),
		largest.Name, quantity(largest.Capacity, corev1.ResourceCPU), quantity(largest.Capacity, corev1.ResourceMemory)), nil
}

// requirementsAllowNone says that the template's requirements rule out every one of the
// node class's n instance types, and why when the reason is the operating system.
func requirementsAllowNone(pool *v1beta1.NodePool, n int) string {
	msg := fmt.Sprintf("spec.template.spec.requirements allow none of the %d instance types the node class offers", n)
	linux := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelOSStable: "linux"}}}
	for _, r := range pool.Spec.Template.Spec.Requirements {
		if r.Key != corev1.LabelOSStable {
			continue
		}
		selector := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: v1beta1.CoreRequirements([]v1beta1.NodeSelectorRequirement{r})}}}
		if ok, err := corev1helpers.MatchNodeSelectorTerms(linux, selector); err == nil && !ok {
			msg += ": every node Stratos launches runs linux, and kubernetes.io/os " + string(r.Operator) + " [" + strings.Join(r.Values, ", ") + "] rules it out"
		}
	}
	return msg
}

// quantity is the amount of name in list, 0 when it is not there.
func quantity(list corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := list[name]
	if !ok {
		return "0"
	}
	return q.String()
}

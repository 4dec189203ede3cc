package v1beta1

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// Nodes is the limit on the number of the pool's claims, nil when there is none. The API
// server admits only whole numbers for it; a count beyond int32 caps nothing a cluster
// can reach, so it is read as the largest int32.
func (l Limits) Nodes() *int32 {
	q, ok := l[LimitNodes]
	if !ok {
		return nil
	}
	n := int32(min(max(q.Value(), 0), math.MaxInt32))
	return &n
}

// Resources are the limits on what nodes have in their capacity (cpu, memory,
// nvidia.com/gpu, ...): every limit but nodes. Nil when there is none.
func (l Limits) Resources() corev1.ResourceList {
	var out corev1.ResourceList
	for name, q := range l {
		if name == LimitNodes {
			continue
		}
		if out == nil {
			out = corev1.ResourceList{}
		}
		out[name] = q
	}
	return out
}

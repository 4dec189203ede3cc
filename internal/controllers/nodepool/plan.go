package nodepool

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// member is what planning needs to know of one claim of a pool.
type member struct {
	name     string
	standby  bool // it is asked to be standby
	deleting bool
	drifted  bool
	created  time.Time
	// capacity is the instance's, once launched; nil before.
	capacity corev1.ResourceList
}

// plan is what the pool controller does in one pass.
type plan struct {
	// create is how many standby claims to create.
	create int
	// remove are the standby claims to delete, in order.
	remove []string
	// limited says which limit kept create below the shortfall, if one did.
	limited string
}

// planStandby keeps the standby claims (those asked to be standby, warming ones
// included) between target and ceiling: a shortfall below target is created in one pass
// within limits, and an excess above ceiling removed, drifted claims first, then the
// oldest. The ceiling leaves room for running nodes given back to the pool. Every claim
// of the pool counts against the limits; a claim not launched yet counts as perNode, the
// capacity of the node a new claim would get.
func planStandby(target, ceiling int32, members []member, limits *v1alpha1.Limits, perNode corev1.ResourceList) plan {
	var standby []member
	live := 0
	for _, m := range members {
		if m.deleting {
			continue
		}
		live++
		if m.standby {
			standby = append(standby, m)
		}
	}
	have := len(standby)
	ceiling = max(ceiling, target)
	if have > int(ceiling) {
		sort.SliceStable(standby, func(a, b int) bool {
			x, y := standby[a], standby[b]
			if x.drifted != y.drifted {
				return x.drifted
			}
			if !x.created.Equal(y.created) {
				return x.created.Before(y.created)
			}
			return x.name < y.name
		})
		var p plan
		for _, m := range standby[:have-int(ceiling)] {
			p.remove = append(p.remove, m.name)
		}
		return p
	}
	want := max(int(target)-have, 0)
	p := plan{create: want}
	if limits == nil || want == 0 {
		return p
	}
	if limits.Nodes != nil {
		p.limit(int(*limits.Nodes)-live, fmt.Sprintf("limits.nodes (%d)", *limits.Nodes))
	}
	for name, limit := range map[corev1.ResourceName]*resource.Quantity{corev1.ResourceCPU: limits.CPU, corev1.ResourceMemory: limits.Memory} {
		if limit == nil {
			continue
		}
		p.limit(room(*limit, name, members, perNode), fmt.Sprintf("limits.%s (%s)", name, limit.String()))
	}
	return p
}

// limit lowers create to at most n and remembers why.
func (p *plan) limit(n int, why string) {
	n = max(n, 0)
	if n < p.create {
		p.create = n
		p.limited = why
	}
}

// room is how many more nodes of size perNode fit under limit for resource name.
func room(limit resource.Quantity, name corev1.ResourceName, members []member, perNode corev1.ResourceList) int {
	size, ok := perNode[name]
	if !ok || size.IsZero() {
		return int(^uint(0) >> 1) // nothing known to count against the limit
	}
	used := resource.Quantity{}
	for _, m := range members {
		if m.deleting {
			continue
		}
		if c, ok := m.capacity[name]; ok {
			used.Add(c)
		} else {
			used.Add(size)
		}
	}
	left := limit.DeepCopy()
	left.Sub(used)
	if left.Sign() <= 0 {
		return 0
	}
	return int(left.MilliValue() / size.MilliValue())
}

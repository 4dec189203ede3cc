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
	ready    bool // it stands by, warmed up and stopped
	deleting bool
	// stale is set for a claim launched from an older template, or expired: it is
	// replaced rather than kept.
	stale   bool
	created time.Time
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
// within limits, and an excess above ceiling removed, the oldest first. The ceiling
// leaves room for running nodes given back to the pool. Every claim of the pool counts
// against the limits; a claim not launched yet counts as perNode, the capacity of the
// node a new claim would get.
//
// Stale standby claims are replaced: fresh ones are created for the target as if the
// stale ones were not there, and each stale one is removed once a fresh one stands by in
// its place, so the warm pool never runs short while its replacements warm up. When the
// limits leave no room for the replacements, stale claims are removed first to make it.
func planStandby(target, ceiling int32, members []member, limits *v1alpha1.Limits, perNode corev1.ResourceList) plan {
	var fresh, stale []member
	live, ready := 0, 0
	for _, m := range members {
		if m.deleting {
			continue
		}
		live++
		switch {
		case m.standby && m.stale:
			stale = append(stale, m)
		case m.standby:
			fresh = append(fresh, m)
			if m.ready {
				ready++
			}
		}
	}
	ceiling = max(ceiling, target)
	oldestFirst(stale)
	oldestFirst(fresh)
	// Above the cap on nodes (a window may lower it, to 0 at night), standby claims go
	// first, stale ones first; running nodes are disruption's to give back.
	if limits != nil && limits.Nodes != nil && live > int(*limits.Nodes) {
		standby := namesOf(stale, fresh)
		return plan{remove: standby[:min(live-int(*limits.Nodes), len(standby))]}
	}
	if excess := len(fresh) - int(ceiling); excess > 0 {
		return plan{remove: namesOf(stale, fresh[:excess])}
	}
	// A stale claim that never stood by (it expired while warming up) is still coming:
	// it is counted as coming, or a pool whose nodes expire faster than they warm up
	// would create claims without end.
	coming := 0
	for _, m := range stale {
		if !m.ready {
			coming++
		}
	}
	want := max(int(target)-len(fresh)-coming, 0)
	p := plan{create: want}
	if limits != nil && want > 0 {
		if limits.Nodes != nil {
			p.limit(int(*limits.Nodes)-live, fmt.Sprintf("limits.nodes (%d)", *limits.Nodes))
		}
		for name, limit := range map[corev1.ResourceName]*resource.Quantity{corev1.ResourceCPU: limits.CPU, corev1.ResourceMemory: limits.Memory} {
			if limit == nil {
				continue
			}
			p.limit(room(*limit, name, members, perNode), fmt.Sprintf("limits.%s (%s)", name, limit.String()))
		}
	}
	// Stale claims hold the warm pool's ready count while fresh ones warm up; those
	// beyond it go now, and so do those whose place the limits cannot give a fresh one.
	keep := min(max(int(target)-ready, 0), len(stale))
	keep = max(keep-(want-p.create), 0)
	p.remove = namesOf(stale[:len(stale)-keep])
	return p
}

// namesOf lists the names of the members of each group in turn.
func namesOf(groups ...[]member) []string {
	var names []string
	for _, g := range groups {
		for _, m := range g {
			names = append(names, m.name)
		}
	}
	return names
}

// oldestFirst sorts members by creation, then name.
func oldestFirst(members []member) {
	sort.SliceStable(members, func(a, b int) bool {
		x, y := members[a], members[b]
		if !x.created.Equal(y.created) {
			return x.created.Before(y.created)
		}
		return x.name < y.name
	})
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

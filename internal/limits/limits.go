// Package limits is the one place a pool's limits are counted: limits.nodes,
// limits.cpu, limits.memory and the active window's maxNodes. Provisioning, standby
// planning, the running minimum and disruption's replacements all ask it what is left,
// so they cannot disagree.
//
// What counts: every claim of the pool that is not being deleted, whatever its phase
// (launching, standing by, running, draining), by the capacity of its instance once the
// kubelet reports it, and before then by the capacity of the cheapest instance type the
// claim may launch as. A claim being deleted no longer counts: its instance is on its
// way out.
package limits

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Estimate is the capacity a claim not launched yet is expected to have; nil when
// nothing is known.
type Estimate func(*v1beta1.NodeClaim) corev1.ResourceList

// Left is what a pool's limits leave for more claims.
type Left struct {
	// Nodes is how many more claims the node cap allows; Unlimited when there is none.
	Nodes int
	// CPU (millicores) and Memory (bytes) are the capacity left; nil when unlimited.
	CPU, Memory *int64
	// nodeCap names the node cap in force, for messages.
	nodeCap string
	cpu     string
	memory  string
}

// Unlimited is Left.Nodes when no cap applies.
const Unlimited = -1

// Usage is what a pool's claims count against its limits.
type Usage struct {
	// Nodes counts the claims; CPU (millicores) and Memory (bytes) add up their capacity.
	Nodes       int
	CPU, Memory int64
}

// Used counts the pool's claims as the limits do: every claim not being deleted, by its
// capacity, or by estimate's for a claim not launched yet (nothing when estimate is nil).
func Used(claims []*v1beta1.NodeClaim, estimate Estimate) Usage {
	var u Usage
	for _, claim := range claims {
		if !claim.DeletionTimestamp.IsZero() {
			continue
		}
		u.Nodes++
		capacity := claim.Status.Capacity
		if len(capacity) == 0 && estimate != nil {
			capacity = estimate(claim)
		}
		u.CPU += capacity.Cpu().MilliValue()
		u.Memory += capacity.Memory().Value()
	}
	return u
}

// Remaining is what limits and the node cap in force (limits.nodes, or the active
// window's maxNodes; nil for none) leave, given the pool's claims. estimate sizes the
// claims not launched yet.
func Remaining(limits *v1beta1.Limits, maxNodes *int32, claims []*v1beta1.NodeClaim, estimate Estimate) Left {
	left := Left{Nodes: Unlimited}
	used := Used(claims, estimate)
	live, cpu, memory := used.Nodes, used.CPU, used.Memory
	if maxNodes != nil {
		left.Nodes = max(int(*maxNodes)-live, 0)
		left.nodeCap = fmt.Sprintf("the node cap (%d)", *maxNodes)
		if limits != nil && limits.Nodes != nil && *limits.Nodes == *maxNodes {
			left.nodeCap = fmt.Sprintf("limits.nodes (%d)", *maxNodes)
		}
	}
	if limits != nil && limits.CPU != nil {
		left.CPU = ptr(limits.CPU.MilliValue() - cpu)
		left.cpu = fmt.Sprintf("limits.cpu (%s)", limits.CPU)
	}
	if limits != nil && limits.Memory != nil {
		left.Memory = ptr(limits.Memory.Value() - memory)
		left.memory = fmt.Sprintf("limits.memory (%s)", limits.Memory)
	}
	return left
}

// Fit is how many more claims of capacity perNode the limits allow, and the limit that
// binds first ("" when none does, or when perNode is unknown for a limit on it).
func (l Left) Fit(perNode corev1.ResourceList) (int, string) {
	n, why := math.MaxInt, ""
	lower := func(m int, name string) {
		if m < n {
			n, why = max(m, 0), name
		}
	}
	if l.Nodes != Unlimited {
		lower(l.Nodes, l.nodeCap)
	}
	if size := perNode.Cpu().MilliValue(); l.CPU != nil && size > 0 {
		lower(int(floorDiv(*l.CPU, size)), l.cpu)
	}
	if size := perNode.Memory().Value(); l.Memory != nil && size > 0 {
		lower(int(floorDiv(*l.Memory, size)), l.memory)
	}
	return n, why
}

// Take counts one more claim of capacity size against what is left.
func (l *Left) Take(size corev1.ResourceList) {
	if l.Nodes != Unlimited {
		l.Nodes = max(l.Nodes-1, 0)
	}
	if l.CPU != nil {
		*l.CPU -= size.Cpu().MilliValue()
	}
	if l.Memory != nil {
		*l.Memory -= size.Memory().Value()
	}
}

func floorDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return a / b
}

func ptr(v int64) *int64 { return &v }

// Package limits is the one place a pool's limits are counted: limits.nodes, the limits
// on resources (cpu, memory, nvidia.com/gpu or any other resource of a node's capacity)
// and the active window's maxNodes. Provisioning, standby planning, the running minimum
// and disruption's replacements all ask it what is left, so they cannot disagree.
//
// What counts: every claim of the pool that is not being deleted, whatever its phase
// (launching, standing by, running, draining), by the capacity of its instance once the
// kubelet reports it, and before then by the capacity of the cheapest instance type the
// claim may launch as. A claim whose capacity lacks a resource counts 0 of it. A claim
// being deleted no longer counts: its instance is on its way out.
package limits

import (
	"fmt"
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Estimate is the capacity a claim not launched yet is expected to have; nil when
// nothing is known.
type Estimate func(*v1beta1.NodeClaim) corev1.ResourceList

// Amount is a quantity of a resource as this package counts it: cpu in millicores, so
// that fractions of a core add up; every other resource in its own units (bytes of
// memory, GPUs), rounded up.
func Amount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Quantity turns an Amount back into a quantity, for messages and metrics.
func Quantity(name corev1.ResourceName, amount int64) resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return *resource.NewMilliQuantity(amount, resource.DecimalSI)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return *resource.NewQuantity(amount, resource.BinarySI)
	}
	return *resource.NewQuantity(amount, resource.DecimalSI)
}

// Left is what a pool's limits leave for more claims.
type Left struct {
	// Nodes is how many more claims the node cap allows; Unlimited when there is none.
	Nodes int
	// Resources is the capacity left of each limited resource, as Amounts (cpu in
	// millicores); a resource absent is not limited. May be negative once claims
	// outgrew a limit lowered under them.
	Resources map[corev1.ResourceName]int64
	// nodeCap and limitNames name the limits in force, for messages.
	nodeCap    string
	limitNames map[corev1.ResourceName]string
}

// Unlimited is Left.Nodes when no cap applies.
const Unlimited = -1

// Usage is what a pool's claims count against its limits.
type Usage struct {
	// Nodes counts the claims.
	Nodes int
	// Resources adds up their capacity by resource, as Amounts (cpu in millicores).
	Resources map[corev1.ResourceName]int64
}

// Used counts the pool's claims as the limits do: every claim not being deleted, by its
// capacity, or by estimate's for a claim not launched yet (nothing when estimate is nil).
func Used(claims []*v1beta1.NodeClaim, estimate Estimate) Usage {
	u := Usage{Resources: map[corev1.ResourceName]int64{}}
	for _, claim := range claims {
		if !claim.DeletionTimestamp.IsZero() {
			continue
		}
		u.Nodes++
		capacity := claim.Status.Capacity
		if len(capacity) == 0 && estimate != nil {
			capacity = estimate(claim)
		}
		for name, q := range capacity {
			u.Resources[name] += Amount(name, q)
		}
	}
	return u
}

// Remaining is what limits and the node cap in force (limits.nodes, or the active
// window's maxNodes; nil for none) leave, given the pool's claims. estimate sizes the
// claims not launched yet.
func Remaining(limits v1beta1.Limits, maxNodes *int32, claims []*v1beta1.NodeClaim, estimate Estimate) Left {
	left := Left{Nodes: Unlimited}
	used := Used(claims, estimate)
	if maxNodes != nil {
		left.Nodes = max(int(*maxNodes)-used.Nodes, 0)
		left.nodeCap = fmt.Sprintf("the node cap (%d)", *maxNodes)
		if n := limits.Nodes(); n != nil && *n == *maxNodes {
			left.nodeCap = fmt.Sprintf("limits.nodes (%d)", *maxNodes)
		}
	}
	for name, limit := range limits.Resources() {
		if left.Resources == nil {
			left.Resources, left.limitNames = map[corev1.ResourceName]int64{}, map[corev1.ResourceName]string{}
		}
		left.Resources[name] = Amount(name, limit) - used.Resources[name]
		left.limitNames[name] = fmt.Sprintf("limits.%s (%s)", name, limit.String())
	}
	return left
}

// Fit is how many more claims of capacity perNode the limits allow, and the limit that
// binds first ("" when none does). A claim without a limited resource in perNode takes
// none of it, so that limit does not bind.
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
	// In name order, so that of two limits binding at once the same one is named.
	for _, name := range l.names() {
		if size := Amount(name, perNode[name]); size > 0 {
			lower(int(floorDiv(l.Resources[name], size)), l.limitNames[name])
		}
	}
	return n, why
}

// Take counts one more claim of capacity size against what is left.
func (l *Left) Take(size corev1.ResourceList) {
	if l.Nodes != Unlimited {
		l.Nodes = max(l.Nodes-1, 0)
	}
	for name := range l.Resources {
		l.Resources[name] -= Amount(name, size[name])
	}
}

func (l Left) names() []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l.Resources))
	for name := range l.Resources {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

func floorDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return a / b
}

package nodepool

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/limits"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func standbyMembers(n int) []member {
	var out []member
	for i := range n {
		out = append(out, member{name: fmt.Sprintf("s%d", i), standby: true, created: epoch.Add(time.Duration(i) * time.Minute)})
	}
	return out
}

func size(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

// planStandby plans a pool with no running minimum under limits l (whose nodes is the
// node cap in force). capacity gives the launched members' capacity; the others count
// as perNode, as the limits package's estimate would size them.
func planStandby(target, ceiling int32, members []member, l v1beta1.Limits, perNode corev1.ResourceList, capacity ...map[string]corev1.ResourceList) plan {
	return planWith(goal{target: target, ceiling: ceiling}, members, l, perNode, capacity...)
}

func planWith(g goal, members []member, l v1beta1.Limits, perNode corev1.ResourceList, capacity ...map[string]corev1.ResourceList) plan {
	g.maxNodes = l.Nodes()
	var claims []*v1beta1.NodeClaim
	for _, m := range members {
		c := &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: m.name}}
		if m.deleting {
			c.DeletionTimestamp = &metav1.Time{Time: epoch}
		}
		if len(capacity) > 0 {
			c.Status.Capacity = capacity[0][m.name]
		}
		claims = append(claims, c)
	}
	left := limits.Remaining(l, g.maxNodes, claims, func(*v1beta1.NodeClaim) corev1.ResourceList { return perNode })
	return planPool(g, members, left, perNode)
}

func TestPlanCreatesTheWholeShortfallAtOnce(t *testing.T) {
	p := planStandby(5, 5, standbyMembers(1), nil, size("2", "8Gi"))
	if p.create != 4 || len(p.remove) != 0 || p.limited != "" {
		t.Fatalf("plan = %+v, want 4 creations", p)
	}
}

func TestPlanIgnoresRunningAndDeletingClaimsForTheTarget(t *testing.T) {
	members := append(standbyMembers(2),
		member{name: "running", standby: false},
		member{name: "going", standby: true, deleting: true},
	)
	if p := planStandby(3, 3, members, nil, nil); p.create != 1 {
		t.Fatalf("plan = %+v, want 1 creation", p)
	}
}

func TestPlanRemovesStaleFirstThenOldest(t *testing.T) {
	members := standbyMembers(4) // s0 is the oldest
	members[2].stale = v1beta1.DisruptionDrifted
	p := planStandby(1, 1, members, nil, nil)
	if want := []string{"s2", "s0", "s1"}; !slices.Equal(p.remove, want) || p.create != 0 {
		t.Fatalf("plan = %+v, want removal of %v", p, want)
	}
}

func TestPlanRespectsTheNodeLimitCountingEveryClaim(t *testing.T) {
	members := append(standbyMembers(1), member{name: "running"})
	p := planStandby(5, 5, members, v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("3")}, nil)
	if p.create != 1 || p.limited != "limits.nodes (3)" {
		t.Fatalf("plan = %+v, want 1 creation limited by limits.nodes", p)
	}
	if p := planStandby(5, 5, members, v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("1")}, nil); p.create != 0 {
		t.Fatalf("over the limit already: plan = %+v, want no creation", p)
	}
}

func TestPlanRespectsCPUAndMemoryLimits(t *testing.T) {
	perNode := size("2", "8Gi")
	launched := map[string]corev1.ResourceList{"big": size("4", "16Gi")}
	members := []member{{name: "big"}, {name: "pending", standby: true}} // pending counts as perNode
	cpu := resource.MustParse("10")
	p := planStandby(10, 10, members, v1beta1.Limits{corev1.ResourceCPU: cpu}, perNode, launched)
	// 10 - (4 + 2) = 4 CPUs left: two more 2-CPU nodes.
	if p.create != 2 || p.limited != "limits.cpu (10)" {
		t.Fatalf("plan = %+v, want 2 creations limited by cpu", p)
	}
	memory := resource.MustParse("40Gi")
	p = planStandby(10, 10, members, v1beta1.Limits{corev1.ResourceMemory: memory}, perNode, launched)
	// 40Gi - 24Gi = 16Gi: two 8Gi nodes.
	if p.create != 2 || p.limited != "limits.memory (40Gi)" {
		t.Fatalf("plan = %+v, want 2 creations limited by memory", p)
	}
}

func TestPlanWithoutASizeEstimateOnlyCountsNodes(t *testing.T) {
	cpu := resource.MustParse("1")
	if p := planStandby(3, 3, nil, v1beta1.Limits{corev1.ResourceCPU: cpu}, nil); p.create != 3 {
		t.Fatalf("plan = %+v, want 3 creations", p)
	}
}

func TestPlanKeepsGivenBackNodesUpToTheCeiling(t *testing.T) {
	if p := planStandby(1, 3, standbyMembers(3), nil, nil); p.create != 0 || len(p.remove) != 0 {
		t.Fatalf("3 standby under a ceiling of 3: plan = %+v, want nothing", p)
	}
	if p := planStandby(1, 3, standbyMembers(5), nil, nil); !slices.Equal(p.remove, []string{"s0", "s1"}) {
		t.Fatalf("5 standby over a ceiling of 3: plan = %+v, want the two oldest removed", p)
	}
}

func staleMembers(n int, ready bool) []member {
	out := standbyMembers(n)
	for i := range out {
		out[i].name = fmt.Sprintf("stale%d", i)
		out[i].stale, out[i].ready = v1beta1.DisruptionDrifted, ready
	}
	return out
}

func freshMembers(n int, ready bool) []member {
	out := standbyMembers(n)
	for i := range out {
		out[i].name = fmt.Sprintf("fresh%d", i)
		out[i].ready = ready
		out[i].created = out[i].created.Add(time.Hour)
	}
	return out
}

func TestPlanReplacesStaleStandbyKeepingThemUntilFreshOnesStandBy(t *testing.T) {
	if p := planStandby(2, 2, staleMembers(2, true), nil, nil); p.create != 2 || len(p.remove) != 0 {
		t.Fatalf("plan = %+v, want 2 replacements created and the stale ones kept", p)
	}
	warming := append(staleMembers(2, true), freshMembers(2, false)...)
	if p := planStandby(2, 2, warming, nil, nil); p.create != 0 || len(p.remove) != 0 {
		t.Fatalf("plan = %+v, want the stale ones kept while the replacements warm up", p)
	}
	halfway := append(staleMembers(2, true), freshMembers(2, false)...)
	halfway[2].ready = true
	if p := planStandby(2, 2, halfway, nil, nil); p.create != 0 || !slices.Equal(p.remove, []string{"stale0"}) {
		t.Fatalf("plan = %+v, want the oldest stale claim removed for the one replacement ready", p)
	}
	done := append(staleMembers(2, true), freshMembers(2, true)...)
	if p := planStandby(2, 2, done, nil, nil); p.create != 0 || !slices.Equal(p.remove, []string{"stale0", "stale1"}) {
		t.Fatalf("plan = %+v, want both stale claims removed", p)
	}
}

func TestPlanRemovesStaleStandbyFirstWhenLimitsLeaveNoRoom(t *testing.T) {
	p := planStandby(2, 2, staleMembers(2, true), v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("3")}, nil)
	if p.create != 1 || !slices.Equal(p.remove, []string{"stale0"}) {
		t.Fatalf("plan = %+v, want one replacement created and one stale claim removed to make room", p)
	}
}

func TestPlanRemovesStaleStandbyAboveTheTarget(t *testing.T) {
	// Given-back nodes above the target are not replaced when they go stale.
	members := append(freshMembers(1, true), staleMembers(2, true)...)
	if p := planStandby(1, 3, members, nil, nil); p.create != 0 || !slices.Equal(p.remove, []string{"stale0", "stale1"}) {
		t.Fatalf("plan = %+v, want the stale claims above the target removed", p)
	}
}

func TestPlanCountsStaleClaimsStillWarmingAsComing(t *testing.T) {
	// Nodes that expire before they stand by must not make the pool create without end.
	if p := planStandby(2, 2, staleMembers(2, false), nil, nil); p.create != 0 || len(p.remove) != 0 {
		t.Fatalf("plan = %+v, want nothing created while the stale claims still warm up", p)
	}
}

func TestPlanRemovesStandbyAboveTheNodeCap(t *testing.T) {
	// A night window caps the pool at 0 nodes: every standby claim goes, stale first.
	members := append(freshMembers(2, true), staleMembers(1, true)...)
	members = append(members, member{name: "running"})
	p := planStandby(2, 2, members, v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("0")}, nil)
	if p.create != 0 || !slices.Equal(p.remove, []string{"stale0", "fresh0", "fresh1"}) {
		t.Fatalf("plan = %+v, want every standby claim removed, the stale one first", p)
	}
}

// The running minimum and the warm pool share the node cap in one plan: a window that
// wants 2 nodes running and 3 standby under a cap of 4 gets 2 launched and 2 standby,
// not 5 claims that disruption would then have to terminate.
func TestPlanKeepsTheRunningMinimumAndTheWarmPoolWithinTheCap(t *testing.T) {
	p := planWith(goal{target: 3, ceiling: 3, minRunning: 2}, nil, v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("4")}, nil)
	if p.launch != 2 || p.create != 2 || p.limited != "limits.nodes (4)" {
		t.Fatalf("plan = %+v, want 2 launched for the minimum and 2 standby, limited by the cap", p)
	}
	// Under cpu limits the same: 4 CPUs of 1-CPU nodes.
	cpu := resource.MustParse("4")
	p = planWith(goal{target: 3, ceiling: 3, minRunning: 2}, nil, v1beta1.Limits{corev1.ResourceCPU: cpu}, size("1", "4Gi"))
	if p.launch != 2 || p.create != 2 || p.limited != "limits.cpu (4)" {
		t.Fatalf("plan = %+v, want 2 launched and 2 standby within limits.cpu", p)
	}
}

// The running minimum starts the readiest standby claims, fresh before stale, and the
// warm pool refills in the same plan. A claim warming up is readiest: it runs and takes
// pods at once, while a stopped one needs a start.
func TestPlanStartsTheReadiestStandbyForTheMinimum(t *testing.T) {
	members := []member{
		{name: "a-stale", standby: true, stale: v1beta1.DisruptionDrifted, ready: true, phase: v1beta1.PhaseStandby, created: epoch},
		{name: "b-ready", standby: true, ready: true, phase: v1beta1.PhaseStandby, created: epoch},
		{name: "c-warming", standby: true, phase: v1beta1.PhaseWarmingUp, created: epoch},
	}
	p := planWith(goal{target: 3, ceiling: 3, minRunning: 2}, members, nil, nil)
	if !slices.Equal(p.start, []string{"c-warming", "b-ready"}) || p.launch != 0 {
		t.Fatalf("plan = %+v, want the warming claim started, then the fresh stopped one", p)
	}
	if p.create != 3 || len(p.remove) != 0 {
		t.Fatalf("plan = %+v, want the warm pool refilled with 3 claims, the stale one kept until they stand by", p)
	}
	// Fresh before stale, as provisioning ranks them: a stale claim warming up runs
	// sooner, but the pool replaces it anyway.
	staleWarming := []member{
		{name: "a-stale-warming", standby: true, stale: v1beta1.DisruptionDrifted, phase: v1beta1.PhaseWarmingUp, created: epoch},
		{name: "b-fresh-stopped", standby: true, ready: true, phase: v1beta1.PhaseStandby, created: epoch},
	}
	if p := planWith(goal{minRunning: 1}, staleWarming, nil, nil); !slices.Equal(p.start, []string{"b-fresh-stopped"}) {
		t.Fatalf("plan = %+v, want the fresh stopped claim started before the stale warming one", p)
	}
	running := []member{{name: "r1"}, {name: "r2"}}
	if p := planWith(goal{target: 1, ceiling: 1, minRunning: 2}, running, nil, nil); len(p.start) != 0 || p.launch != 0 || p.create != 1 {
		t.Fatalf("plan = %+v, want the minimum met already and one standby created", p)
	}
}

// The running minimum starts standby claims in the order provisioning offers them to
// pods (internal/standby): a claim warming up before a stopped one, both before one
// still coming up, and that before one stopping; a running node being given back last.
// Each pair is named so that the name, the last tie-breaker, would pick the wrong one.
func TestPlanStartsForTheMinimumInProvisioningsOrder(t *testing.T) {
	phases := []v1beta1.NodeClaimPhase{
		v1beta1.PhaseWarmingUp, v1beta1.PhaseStandby, v1beta1.PhaseLaunching, v1beta1.PhaseStopping, v1beta1.PhaseRunning,
	}
	for i, first := range phases[:len(phases)-1] {
		for _, later := range phases[i+1:] {
			members := []member{
				{name: "a-" + string(later), standby: true, phase: later, created: epoch},
				{name: "b-" + string(first), standby: true, phase: first, created: epoch},
			}
			p := planWith(goal{minRunning: 1}, members, nil, nil)
			if !slices.Equal(p.start, []string{"b-" + string(first)}) {
				t.Errorf("%s and %s: started %v, want the %s one", first, later, p.start, first)
			}
		}
	}
}

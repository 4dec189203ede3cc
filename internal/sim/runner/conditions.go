package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	nodeutil "k8s.io/component-helpers/node/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// view is the cluster as the conditions and the timeline see it at one moment.
type view struct {
	podsRunning, podsPending int
	readyNodes               int
	nodes                    []corev1.Node
	pools                    []v1beta1.NodePool
	// claims counts NodeClaims by pool, zone and phase.
	claims map[claimKey]int
	capacityCounts
	// costly answers the counts that read more than the cache's pods, Nodes and claims;
	// it is only asked when a condition needs them. Nil in a view for the timeline.
	costly costlyCounts
	// marks are the moments mark steps named so far, which a condition's since counts
	// from.
	marks map[string]moment
}

// costlyCounts are the counts of a condition that read Events, the audit log or every
// pod's latency.
type costlyCounts interface {
	podsWithEvent(reason string) int
	evictions() int
	// podLatency is the q-th percentile (0 to 100) of the latencies of the scenario's pods
	// created at or after since that run, in scenario seconds rounded up.
	podLatency(q float64, since time.Time) int
	// podsServed counts the scenario's pods created at or after since that run and were
	// served by path.
	podsServed(path report.Path, since time.Time) int
	// buffersShowing counts the CapacityBuffers whose condition is as want says.
	buffersShowing(want *scenario.BufferConditionCount) int
	// daemonSetPodsOnStandby counts the DaemonSet pods bound to the Nodes of standby claims.
	daemonSetPodsOnStandby() int
	// displaced answers the counts of displaced pods and their recovery, by the
	// condition's name (podsDisplaced, podsAwaitingReplacement…).
	displaced(name string) int
	// workloadLatency is a percentile of the latencies of one workload's pods that run,
	// in scenario seconds rounded up.
	workloadLatency(want *scenario.WorkloadLatency) int
	// standbyNodeHours is a pool's standby node-hours so far, rounded up.
	standbyNodeHours(pool string) int
	// scaleFigures are the operator's memory, decision time, writes and cloud calls so
	// far, which the scale counts bound.
	scaleFigures() scaleFigures
}

// claimKey is what claims are counted by: pool, zone and capacity type of the instance
// ("" before the launch) and phase.
type claimKey struct{ pool, zone, capacityType, phase string }

// claimsInPhase counts the claims that match want (any phase, pool, zone or capacity
// type for those it leaves empty).
func (v *view) claimsInPhase(want *scenario.ClaimCount) int {
	n := 0
	for k, count := range v.claims {
		if (want.Pool == "" || k.pool == want.Pool) && (want.Zone == "" || k.zone == want.Zone) &&
			(want.CapacityType == "" || k.capacityType == want.CapacityType) && (want.Phase == "" || k.phase == want.Phase) {
			n += count
		}
	}
	return n
}

// byPhase counts the claims in each phase over every pool.
func (v *view) byPhase() map[string]int {
	all := map[string]int{}
	for k, n := range v.claims {
		all[k.phase] += n
	}
	return all
}

// look reads the view from the simulator's cache. It runs every poll of a wait and
// every timeline sample: the objects are the cache's own, not copies (at 5,000 pods the
// copies were half the simulator's CPU), so nothing may change them.
func look(ctx context.Context, c client.Reader, obs *observer) (*view, error) {
	v := &view{claims: map[claimKey]int{}}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.HasLabels{WorkloadLabel}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		switch {
		case isRunning(pod):
			v.podsRunning++
		case pod.DeletionTimestamp == nil && !podutil.Finished(pod):
			v.podsPending++
		}
	}
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range nodes.Items {
		if isReadyAndSchedulable(&nodes.Items[i]) {
			v.readyNodes++
		}
	}
	v.nodes = nodes.Items
	claims := &v1beta1.NodeClaimList{}
	if err := c.List(ctx, claims, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for _, claim := range claims.Items {
		phase := string(claim.Status.Phase)
		if phase == "" {
			phase = string(v1beta1.PhaseLaunching)
		}
		v.claims[claimKey{claim.Labels[v1beta1.LabelNodePool], claim.Status.Zone, claim.Status.CapacityType, phase}]++
	}
	pools := &v1beta1.NodePoolList{}
	if err := c.List(ctx, pools, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	v.pools = pools.Items
	v.capacityCounts = obs.counters()
	return v, nil
}

func isReadyAndSchedulable(node *corev1.Node) bool {
	if node.Spec.Unschedulable {
		return false
	}
	_, ready := nodeutil.GetNodeCondition(&node.Status, corev1.NodeReady)
	return ready != nil && ready.Status == corev1.ConditionTrue
}

// holds evaluates a condition on a view; when it does not hold, the reason says what
// was seen.
func holds(c *scenario.Condition, v *view) (bool, string) {
	from, marked := v.marks[c.Since]
	if c.Since != "" && !marked {
		return false, fmt.Sprintf("no step marked %s", c.Since)
	}
	var unmet []string
	for _, count := range c.Counts() {
		name := countName(c, count)
		if got := v.count(count, from); !countHolds(count.Want, got) {
			unmet = append(unmet, fmt.Sprintf("%s is %d, want %s", name, got, describeCount(count.Want)))
		}
	}
	return len(unmet) == 0, strings.Join(unmet, "; ")
}

// count is the view's value of one count of a condition, the accumulating ones counted
// from the moment from (the zero moment: since the scenario began).
func (v *view) count(c scenario.NamedCount, from moment) int {
	switch {
	case c.Served != nil:
		return v.costly.podsServed(report.Path(c.Served.Path), from.at)
	case c.BufferCondition != nil:
		return v.costly.buffersShowing(c.BufferCondition)
	case c.Claims != nil:
		return v.claimsInPhase(c.Claims)
	case c.Event != nil:
		return v.costly.podsWithEvent(c.Event.Reason)
	case c.Nodes != nil:
		return v.nodesShowing(c.Nodes)
	case c.PoolCondition != nil:
		return v.poolsShowing(c.PoolCondition)
	case c.Latency != nil:
		return v.costly.workloadLatency(c.Latency)
	case c.StandbyHours != nil:
		return v.costly.standbyNodeHours(c.StandbyHours.Pool)
	case c.StandbyTarget != nil:
		return v.standbyTarget(c.StandbyTarget.Pool)
	case c.CloudCalls != nil || scaleCounts[c.Name]:
		return v.costly.scaleFigures().count(c)
	case c.Name == "evictions":
		return v.costly.evictions()
	case c.Name == "podLatencyP99":
		return v.costly.podLatency(99, from.at)
	case c.Name == "podLatencyMax":
		return v.costly.podLatency(100, from.at)
	case c.Name == "daemonSetPodsOnStandby":
		return v.costly.daemonSetPodsOnStandby()
	case displacedCounts[c.Name]:
		return v.costly.displaced(c.Name)
	}
	return map[string]int{
		"podsRunning": v.podsRunning, "podsPending": v.podsPending, "readyNodes": v.readyNodes,
		"startedFromStandby":   v.startedFromStandby - from.capacity.startedFromStandby,
		"takenWhileWarming":    v.takenWhileWarming - from.capacity.takenWhileWarming,
		"launchedCold":         v.launchedCold - from.capacity.launchedCold,
		"daemonSetPodsDeleted": v.daemonSetPodsDeleted,
	}[c.Name]
}

// displacedCounts are the counts of a condition about displaced pods.
var displacedCounts = map[string]bool{
	"podsDisplaced": true, "podsAwaitingReplacement": true, "podsKilledByInterruption": true,
	"interruptionRecoveryP99": true, "interruptionRecoveryMax": true, "repairRecoveryMax": true,
}

// nodesShowing counts the Nodes that show what want names: its pool, labels, taints,
// capacity and allocatable.
func (v *view) nodesShowing(want *scenario.NodeCount) int {
	n := 0
	for i := range v.nodes {
		node := &v.nodes[i]
		if want.Pool != "" && node.Labels[v1beta1.LabelNodePool] != want.Pool {
			continue
		}
		if want.CapacityType != "" && node.Labels[v1beta1.LabelCapacityType] != want.CapacityType {
			continue
		}
		if showsLabels(node, want.Labels) && showsTaints(node, want.Taints) &&
			showsQuantities(node.Status.Capacity, want.Capacity) && showsQuantities(node.Status.Allocatable, want.Allocatable) {
			n++
		}
	}
	return n
}

func showsLabels(node *corev1.Node, labels map[string]string) bool {
	for k, val := range labels {
		if got, ok := node.Labels[k]; !ok || got != val {
			return false
		}
	}
	return true
}

func showsTaints(node *corev1.Node, taints []corev1.Taint) bool {
	for _, want := range taints {
		if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&want) && t.Value == want.Value }) {
			return false
		}
	}
	return true
}

func showsQuantities(got, want corev1.ResourceList) bool {
	for name, q := range want {
		if have, ok := got[name]; !ok || have.Cmp(q) != 0 {
			return false
		}
	}
	return true
}

func countHolds(c *scenario.Count, n int) bool {
	return (c.Equals == nil || n == *c.Equals) && (c.AtLeast == nil || n >= *c.AtLeast) && (c.AtMost == nil || n <= *c.AtMost)
}

func describeCount(c *scenario.Count) string {
	var parts []string
	if c.Equals != nil {
		parts = append(parts, fmt.Sprintf("= %d", *c.Equals))
	}
	if c.AtLeast != nil {
		parts = append(parts, fmt.Sprintf("≥ %d", *c.AtLeast))
	}
	if c.AtMost != nil {
		parts = append(parts, fmt.Sprintf("≤ %d", *c.AtMost))
	}
	return strings.Join(parts, " and ")
}

// describeCondition is a short text of a condition, for step descriptions.
func describeCondition(c *scenario.Condition) string {
	var parts []string
	for _, count := range c.Counts() {
		parts = append(parts, countName(c, count)+" "+describeCount(count.Want))
	}
	return strings.Join(parts, ", ")
}

// poolsShowing counts the pools, one or all, whose condition of want's type is True
// with want's reason, if it names one.
func (v *view) poolsShowing(want *scenario.PoolConditionCount) int {
	n := 0
	for i := range v.pools {
		pool := &v.pools[i]
		if want.Pool != "" && pool.Name != want.Pool {
			continue
		}
		c := meta.FindStatusCondition(pool.Status.Conditions, want.Type)
		if c != nil && c.Status == metav1.ConditionTrue && (want.Reason == "" || c.Reason == want.Reason) {
			n++
		}
	}
	return n
}

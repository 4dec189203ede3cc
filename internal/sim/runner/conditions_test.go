package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// fixedCounts answers the costly counts with set values: those since the scenario began,
// and for the latencies and paths those since markAt.
type fixedCounts struct {
	events           map[string]int
	evicted, p99, mx int
	onStandby        int
	displacedBy      map[string]int
	served           map[report.Path]int
	buffers          map[string]int
	// markAt is the moment of the mark the *SinceMark counts are since.
	markAt          time.Time
	p99SinceMark    int
	servedSinceMark map[report.Path]int
	// latencies are by workload name and percentile; hours by pool.
	latencies map[string]map[int]int
	hours     map[string]int
	scale     scaleFigures
}

func (f fixedCounts) podsServed(path report.Path, since time.Time) int {
	if since.IsZero() {
		return f.served[path]
	}
	if since.Equal(f.markAt) {
		return f.servedSinceMark[path]
	}
	return -1
}

func (f fixedCounts) buffersShowing(want *scenario.BufferConditionCount) int {
	return f.buffers[want.Type+"/"+string(want.StatusOrDefault())]
}

func (f fixedCounts) workloadLatency(want *scenario.WorkloadLatency) int {
	return f.latencies[want.Name][want.Percentile]
}
func (f fixedCounts) standbyNodeHours(pool string) int { return f.hours[pool] }

func (f fixedCounts) displaced(name string) int { return f.displacedBy[name] }

func (f fixedCounts) podsWithEvent(reason string) int { return f.events[reason] }
func (f fixedCounts) evictions() int                  { return f.evicted }
func (f fixedCounts) daemonSetPodsOnStandby() int     { return f.onStandby }
func (f fixedCounts) podLatency(q float64, since time.Time) int {
	switch {
	case !since.IsZero() && !since.Equal(f.markAt):
		return -1
	case q == 100 && since.IsZero():
		return f.mx
	case q == 99 && since.IsZero():
		return f.p99
	case q == 99:
		return f.p99SinceMark
	}
	return -1
}

func TestHolds(t *testing.T) {
	v := &view{
		podsRunning: 40, podsPending: 2, readyNodes: 7, capacityCounts: capacityCounts{startedFromStandby: 5, launchedCold: 2, daemonSetPodsDeleted: 1},
		claims: map[claimKey]int{
			{"a", "zone-1", "on-demand", "Standby"}: 2, {"a", "zone-2", "on-demand", "Standby"}: 1, {"a", "zone-1", "spot", "Running"}: 4, {"b", "zone-2", "on-demand", "Standby"}: 2,
		},
		pools: []v1beta1.NodePool{{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: v1beta1.NodePoolStatus{StandbyTarget: 3}}},
		costly: fixedCounts{events: map[string]int{"NoNodePoolFits": 6}, evicted: 1, p99: 48, mx: 61, onStandby: 3,
			latencies: map[string]map[int]int{"peak-5": {50: 4, 90: 9}}, hours: map[string]int{"fixed": 1200, "learned": 31},
			displacedBy: map[string]int{"podsDisplaced": 12, "podsAwaitingReplacement": 1, "podsKilledByInterruption": 0, "interruptionRecoveryP99": 14, "interruptionRecoveryMax": 31, "repairRecoveryMax": 70}},
	}
	cases := []struct {
		name string
		c    scenario.Condition
		ok   bool
		why  string
	}{
		{"equals holds", scenario.Condition{PodsRunning: &scenario.Count{Equals: ptr.To(40)}}, true, ""},
		{"equals fails", scenario.Condition{PodsRunning: &scenario.Count{Equals: ptr.To(41)}}, false, "podsRunning is 40, want = 41"},
		{"range holds", scenario.Condition{ReadyNodes: &scenario.Count{AtLeast: ptr.To(7), AtMost: ptr.To(8)}}, true, ""},
		{"at most fails", scenario.Condition{PodsPending: &scenario.Count{AtMost: ptr.To(0)}}, false, "podsPending is 2, want ≤ 0"},
		{"claims of all pools", scenario.Condition{Claims: []scenario.ClaimCount{{Phase: "Standby", Count: scenario.Count{Equals: ptr.To(5)}}}}, true, ""},
		{"claims of one pool", scenario.Condition{Claims: []scenario.ClaimCount{{Phase: "Standby", Pool: "b", Count: scenario.Count{Equals: ptr.To(3)}}}}, false, "claims Standby of pool b is 2, want = 3"},
		{"claims in any phase", scenario.Condition{Claims: []scenario.ClaimCount{{Pool: "a", Count: scenario.Count{Equals: ptr.To(6)}}}}, false, "claims of pool a is 7, want = 6"},
		{"claims in one zone", scenario.Condition{Claims: []scenario.ClaimCount{{Phase: "Standby", Zone: "zone-2", Count: scenario.Count{Equals: ptr.To(3)}}}}, true, ""},
		{"claims of one pool in one zone", scenario.Condition{Claims: []scenario.ClaimCount{{Phase: "Standby", Pool: "a", Zone: "zone-1", Count: scenario.Count{Equals: ptr.To(1)}}}}, false, "claims Standby of pool a in zone-1 is 2, want = 1"},
		{"pods with an Event", scenario.Condition{PodEvents: []scenario.EventCount{{Reason: "NoNodePoolFits", Count: scenario.Count{AtLeast: ptr.To(6)}}}}, true, ""},
		{"evictions", scenario.Condition{Evictions: &scenario.Count{Equals: ptr.To(0)}}, false, "evictions is 1, want = 0"},
		{"latencies", scenario.Condition{PodLatencyP99: &scenario.Count{AtMost: ptr.To(50)}, PodLatencyMax: &scenario.Count{AtMost: ptr.To(60)}}, false, "podLatencyMax is 61, want ≤ 60"},
		{"DaemonSet pods on standby", scenario.Condition{DaemonSetPodsOnStandby: &scenario.Count{Equals: ptr.To(3)}}, true, ""},
		{"DaemonSet pods deleted", scenario.Condition{DaemonSetPodsDeleted: &scenario.Count{Equals: ptr.To(0)}}, false, "daemonSetPodsDeleted is 1, want = 0"},
		{"claims of a capacity type", scenario.Condition{Claims: []scenario.ClaimCount{{Pool: "a", CapacityType: "spot", Count: scenario.Count{Equals: ptr.To(0)}}}}, false, "claims of pool a (spot) is 4, want = 0"},
		{"displaced pods", scenario.Condition{
			PodsDisplaced:            &scenario.Count{Equals: ptr.To(12)},
			PodsKilledByInterruption: &scenario.Count{Equals: ptr.To(0)},
			InterruptionRecoveryP99:  &scenario.Count{AtMost: ptr.To(30)},
			RepairRecoveryMax:        &scenario.Count{AtMost: ptr.To(120)},
		}, true, ""},
		{"displaced pods waiting", scenario.Condition{PodsAwaitingReplacement: &scenario.Count{Equals: ptr.To(0)}, InterruptionRecoveryMax: &scenario.Count{AtMost: ptr.To(30)}}, false,
			"podsAwaitingReplacement is 1, want = 0; interruptionRecoveryMax is 31, want ≤ 30"},
		{"a workload's latency", scenario.Condition{WorkloadLatency: []scenario.WorkloadLatency{
			{WorkloadRef: scenario.WorkloadRef{Name: "peak-5"}, Percentile: 50, Count: scenario.Count{AtMost: ptr.To(5)}},
			{WorkloadRef: scenario.WorkloadRef{Name: "peak-5"}, Percentile: 90, Count: scenario.Count{AtMost: ptr.To(8)}},
		}}, false, "p90 latency of peak-5 is 9, want ≤ 8"},
		{"standby node-hours", scenario.Condition{StandbyNodeHours: []scenario.PoolCount{
			{Pool: "learned", Count: scenario.Count{AtMost: ptr.To(31)}}, {Pool: "fixed", Count: scenario.Count{AtMost: ptr.To(1000)}},
		}}, false, "standby node-hours of pool fixed is 1200, want ≤ 1000"},
		{"standby target", scenario.Condition{StandbyTarget: []scenario.PoolCount{
			{Pool: "a", Count: scenario.Count{Equals: ptr.To(3)}}, {Pool: "gone", Count: scenario.Count{Equals: ptr.To(0)}},
		}}, true, ""},
		{"every count must hold", scenario.Condition{
			StartedFromStandby: &scenario.Count{Equals: ptr.To(5)},
			LaunchedCold:       &scenario.Count{Equals: ptr.To(0)},
		}, false, "launchedCold is 2, want = 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, why := holds(&c.c, v)
			if ok != c.ok || why != c.why {
				t.Errorf("holds = %v, %q; want %v, %q", ok, why, c.ok, c.why)
			}
		})
	}
}

// A condition's since counts the claims, latencies and paths from its mark, and leaves
// the counts of the moment alone.
func TestHoldsSince(t *testing.T) {
	markAt := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	v := &view{
		podsRunning: 8, readyNodes: 4,
		capacityCounts: capacityCounts{startedFromStandby: 3, takenWhileWarming: 1, launchedCold: 5},
		marks:          map[string]moment{"burst": {at: markAt, capacity: capacityCounts{startedFromStandby: 1, takenWhileWarming: 1, launchedCold: 5}}},
		costly: fixedCounts{
			p99: 48, p99SinceMark: 2, markAt: markAt,
			served:          map[report.Path]int{report.PathCold: 4, report.PathExisting: 4},
			servedSinceMark: map[report.Path]int{report.PathExisting: 4},
			buffers:         map[string]int{"Provisioning/True": 1, "ReadyForProvisioning/False": 2},
		},
	}
	served := func(path report.Path, n int) scenario.ServedCount {
		return scenario.ServedCount{Path: string(path), Count: scenario.Count{Equals: ptr.To(n)}}
	}
	cases := []struct {
		name string
		c    scenario.Condition
		why  string
	}{
		{"launches since the mark", scenario.Condition{Since: "burst", LaunchedCold: &scenario.Count{Equals: ptr.To(0)}, TakenWhileWarming: &scenario.Count{Equals: ptr.To(0)}}, ""},
		{"starts since the mark", scenario.Condition{Since: "burst", StartedFromStandby: &scenario.Count{Equals: ptr.To(3)}}, "startedFromStandby since burst is 2, want = 3"},
		{"launches since the start", scenario.Condition{LaunchedCold: &scenario.Count{Equals: ptr.To(0)}}, "launchedCold is 5, want = 0"},
		{"the moment's counts are not windowed", scenario.Condition{Since: "burst", LaunchedCold: &scenario.Count{Equals: ptr.To(0)}, PodsRunning: &scenario.Count{Equals: ptr.To(4)}}, "podsRunning is 8, want = 4"},
		{"latency since the mark", scenario.Condition{Since: "burst", PodLatencyP99: &scenario.Count{AtMost: ptr.To(1)}}, "podLatencyP99 since burst is 2, want ≤ 1"},
		{"latency since the start", scenario.Condition{PodLatencyP99: &scenario.Count{AtMost: ptr.To(50)}}, ""},
		{"paths since the mark", scenario.Condition{Since: "burst", PodsServed: []scenario.ServedCount{served(report.PathExisting, 4), served(report.PathCold, 0)}}, ""},
		{"paths since the start", scenario.Condition{PodsServed: []scenario.ServedCount{served(report.PathCold, 0)}}, "pods served cold is 4, want = 0"},
		{"a mark not set", scenario.Condition{Since: "later", LaunchedCold: &scenario.Count{Equals: ptr.To(0)}}, "no step marked later"},
		{"buffer conditions", scenario.Condition{BufferConditions: []scenario.BufferConditionCount{
			{Type: "Provisioning", Count: scenario.Count{Equals: ptr.To(1)}},
			{Type: "ReadyForProvisioning", Status: "False", Buffer: "web", Count: scenario.Count{Equals: ptr.To(0)}},
		}}, "buffers ReadyForProvisioning False named web is 2, want = 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, why := holds(&c.c, v)
			if ok != (c.why == "") || why != c.why {
				t.Errorf("holds = %v, %q; want %q", ok, why, c.why)
			}
		})
	}
}

// A nodes count counts the Nodes of the pool that carry every label and taint given and
// report every quantity given.
func TestHoldsNodes(t *testing.T) {
	node := func(pool, pods, memory string, taints ...corev1.Taint) corev1.Node {
		return corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1beta1.LabelNodePool: pool, "team": pool}},
			Spec:       corev1.NodeSpec{Taints: taints},
			Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourcePods: resource.MustParse(pods), corev1.ResourceMemory: resource.MustParse("8Gi")},
				Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(pods), corev1.ResourceMemory: resource.MustParse(memory)},
			},
		}
	}
	dedicated := corev1.Taint{Key: "dedicated", Value: "a", Effect: corev1.TaintEffectNoSchedule}
	spot := node("b", "20", "7068Mi")
	spot.Labels[v1beta1.LabelCapacityType] = v1beta1.CapacityTypeSpot
	v := &view{nodes: []corev1.Node{
		spot,
		node("a", "20", "7068Mi", dedicated, v1beta1.StandbyTaint),
		node("a", "20", "7068Mi", dedicated),
		node("a", "29", "7518Mi", dedicated),
		node("b", "20", "7068Mi"),
	}}
	count := func(c scenario.NodeCount) scenario.Condition {
		c.Count = scenario.Count{Equals: ptr.To(2)}
		return scenario.Condition{Nodes: []scenario.NodeCount{c}}
	}
	for _, c := range []struct {
		name string
		c    scenario.Condition
		why  string
	}{
		{"by quantities", count(scenario.NodeCount{Pool: "a", Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("20")}, Allocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("7068Mi")}}), ""},
		{"quantities compare by value", count(scenario.NodeCount{Pool: "a", Allocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("7237632Ki")}}), ""},
		{"by taint", count(scenario.NodeCount{Taints: []corev1.Taint{v1beta1.StandbyTaint}}), "nodes as registered is 1, want = 2"},
		{"a taint's value counts", count(scenario.NodeCount{Pool: "a", Taints: []corev1.Taint{{Key: "dedicated", Value: "b", Effect: corev1.TaintEffectNoSchedule}}}), "nodes of pool a as registered is 0, want = 2"},
		{"by label", count(scenario.NodeCount{Labels: map[string]string{"team": "b"}}), ""},
		{"by capacity type", count(scenario.NodeCount{Pool: "b", CapacityType: v1beta1.CapacityTypeSpot}), "nodes of pool b (spot) as registered is 1, want = 2"},
		{"every pool", count(scenario.NodeCount{Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("20")}}), "nodes as registered is 4, want = 2"},
		{"a resource the Nodes do not report", count(scenario.NodeCount{Pool: "a", Capacity: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("0")}}), "nodes of pool a as registered is 0, want = 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, why := holds(&c.c, v)
			if ok != (c.why == "") || why != c.why {
				t.Errorf("holds = %v, %q; want %q", ok, why, c.why)
			}
		})
	}
}

func TestAuditedWrites(t *testing.T) {
	log := strings.Join([]string{
		`{"stage":"ResponseComplete","verb":"patch","objectRef":{"resource":"nodeclaims","subresource":"status"}}`,
		`{"stage":"ResponseComplete","verb":"patch","objectRef":{"resource":"nodeclaims","subresource":"status"}}`,
		`{"stage":"ResponseComplete","verb":"create","objectRef":{"resource":"nodeclaims"}}`,
		`{"stage":"ResponseStarted","verb":"create","objectRef":{"resource":"nodeclaims"}}`,
		`not json`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got := auditedWrites(path)
	if len(got) != 2 || got["patch nodeclaims/status"] != 2 || got["create nodeclaims"] != 1 {
		t.Errorf("auditedWrites = %v, want 2 status patches and 1 create", got)
	}
}

func (f fixedCounts) scaleFigures() scaleFigures { return f.scale }

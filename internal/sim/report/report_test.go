package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPercentiles(t *testing.T) {
	oneToHundred := make([]float64, 100)
	for i := range oneToHundred {
		oneToHundred[i] = float64(100 - i) // reversed, to exercise sorting
	}
	tests := []struct {
		name   string
		values []float64
		want   Latency
	}{
		{"empty", nil, Latency{}},
		{"single", []float64{3.5}, Latency{P50: 3.5, P90: 3.5, P99: 3.5, Max: 3.5}},
		{"one to hundred", oneToHundred, Latency{P50: 50, P90: 90, P99: 99, Max: 100}},
		// Nearest rank for n=10: p50 -> rank 5, p90 -> rank 9, p99 -> rank 10.
		{"ten", []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, Latency{P50: 5, P90: 9, P99: 10, Max: 10}},
		{"two", []float64{2, 1}, Latency{P50: 1, P90: 2, P99: 2, Max: 2}},
		{"nan ignored", []float64{math.NaN(), 4, 2}, Latency{P50: 2, P90: 4, P99: 4, Max: 4}},
		{"only nan", []float64{math.NaN()}, Latency{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentiles(tt.values); got != tt.want {
				t.Errorf("Percentiles() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPercentilesLeavesInputUntouched(t *testing.T) {
	in := []float64{5, 1, 4, 2, 3}
	orig := slices.Clone(in)
	Percentiles(in)
	if !slices.Equal(in, orig) {
		t.Errorf("input modified: got %v, want %v", in, orig)
	}
}

// sampleReport is a small but fully populated report shared by the tests.
func sampleReport() *Report {
	lat := []float64{0.8, 1.2, 0.5, 2.5, 1.0, 7.25}
	return &Report{
		Scenario:    "burst-<100>&co",
		OK:          false,
		Failures:    []string{"step 3: wait for 100 pods Running timed out after 2m0s"},
		TimeScale:   10,
		WallSeconds: 42.5,
		Pods: Pods{
			Created: 6, Running: 5,
			LatencySeconds: Percentiles(lat),
			Latencies:      lat,
			ByPath: ByPath(map[Path][]float64{
				PathStandby: {0.8, 1.2, 0.5, 1.0},
				PathCold:    {2.5, 7.25},
			}),
			ByWorkload: ByWorkload(map[string][]WorkloadPod{
				"peak-1": {{2.5, PathCold}, {7.25, PathCold}},
				"peak-2": {{0.8, PathStandby}, {1.2, PathStandby}, {0.5, PathExisting}, {1.0, ""}},
			}),
		},
		Standby:    map[string]StandbyHours{"fixed": {NodeHours: 240.5, Peak: 10}, "none": {}},
		Nodes:      Nodes{StartedFromStandby: 3, TakenWhileWarming: 1, LaunchedCold: 2, Peak: 7},
		CloudCalls: map[string]int{"Start": 3, "Create": 2, "Terminate": 1},
		APIWrites: map[string]int{
			"patch NodeClaim": 40, "create NodeClaim": 5, "update Node": 12,
			"delete NodeClaim": 1, "patch Node": 7, "create Event": 9,
		},
		Invariants:   Invariants{LeakedInstances: 1},
		Operator:     Operator{Restarts: 2, PeakRSSBytes: 150 << 20},
		Provisioning: Provisioning{StartCallLatencySeconds: Latency{P50: 0.05, P90: 0.1, P99: 0.2, Max: 0.3}},
		Steps: []Step{
			{Index: 1, Description: "create standby pool", OK: true, Seconds: 12.5, CloudCalls: map[string]int{"Create": 2}, LaunchedCold: 2},
			{Index: 2, Description: "scale deployment to 100", OK: false, Seconds: 120, Message: "timed out\nafter 2m", StartedFromStandby: 1, TakenWhileWarming: 2},
		},
		Timeline: []Sample{
			{Seconds: 0, PodsPending: 6, NodesByPhase: map[string]int{"Standby": 3}},
			{Seconds: 5, PodsRunning: 2, PodsPending: 4, NodesByPhase: map[string]int{"Starting": 3, "Launching": 2}},
			{Seconds: 12, PodsRunning: 5, PodsPending: 1, NodesByPhase: map[string]int{"Running": 5, "Custom<x>": 1}},
		},
	}
}

func TestWriteJSONFieldNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	if err := sampleReport().WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, data)
	}
	paths := []string{
		"scenario", "ok", "failures", "timeScale", "wallSeconds",
		"pods.created", "pods.running",
		"pods.latencySeconds.p50", "pods.latencySeconds.p90", "pods.latencySeconds.p99", "pods.latencySeconds.max",
		"pods.byPath.standby.count", "pods.byPath.standby.latencySeconds.p50", "pods.byPath.standby.latencySeconds.p90",
		"pods.byPath.standby.latencySeconds.p99", "pods.byPath.standby.latencySeconds.max",
		"pods.byPath.cold.count", "pods.byPath.cold.latencySeconds.p50",
		// A path no pod took is there with a count of 0, so consumers need not check.
		"pods.byPath.existing.count", "pods.byPath.existing.latencySeconds.p50",
		"nodes.startedFromStandby", "nodes.takenWhileWarming", "nodes.launchedCold", "nodes.peak",
		"cloudCalls.Start", "apiWrites.patch NodeClaim",
		"invariants.leakedInstances", "invariants.duplicateInstances", "invariants.orphanClaims",
		"operator.restarts", "operator.peakRSSBytes",
		"provisioning.startCallLatencySeconds.p99",
		"pods.byWorkload.peak-2.count", "pods.byWorkload.peak-2.latencySeconds.p90", "pods.byWorkload.peak-2.paths.existing",
		"standby.fixed.nodeHours", "standby.fixed.peak", "standby.none.nodeHours",
		"steps", "timeline",
	}
	for _, p := range paths {
		if _, ok := lookup(m, p); !ok {
			t.Errorf("JSON lacks %q", p)
		}
	}
	if _, ok := lookup(m, "pods.latencies"); ok {
		t.Error("raw latencies must not be in the JSON")
	}
	if _, ok := lookup(m, "pods.byPath.standby.latencies"); ok {
		t.Error("a path's raw latencies must not be in the JSON")
	}
	for path, want := range map[string]float64{
		"pods.byPath.standby.count": 4, "pods.byPath.standby.latencySeconds.p50": 0.8, "pods.byPath.standby.latencySeconds.max": 1.2,
		"pods.byPath.cold.count": 2, "pods.byPath.cold.latencySeconds.p50": 2.5, "pods.byPath.existing.count": 0,
		"pods.byWorkload.peak-2.count": 4, "pods.byWorkload.peak-2.latencySeconds.p90": 1.2, "pods.byWorkload.peak-1.latencySeconds.max": 7.25,
		"pods.byWorkload.peak-1.paths.cold": 2, "pods.byWorkload.peak-2.paths.standby": 2, "pods.byWorkload.peak-2.paths.existing": 1, "pods.byWorkload.peak-2.paths.cold": 0,
		"standby.fixed.nodeHours": 240.5, "standby.fixed.peak": 10,
	} {
		if v, _ := lookup(m, path); v != want {
			t.Errorf("%s = %v, want %v", path, v, want)
		}
	}
	// Each step's claims by kind, left out when none came.
	steps, _ := m["steps"].([]any)
	if len(steps) != 2 {
		t.Fatalf("steps = %v, want 2", m["steps"])
	}
	first, second := steps[0].(map[string]any), steps[1].(map[string]any)
	if first["launchedCold"] != float64(2) || second["startedFromStandby"] != float64(1) || second["takenWhileWarming"] != float64(2) {
		t.Errorf("steps' claims: %v and %v; want 2 launched cold, then 1 started from standby and 2 taken while warming", first, second)
	}
	if _, ok := first["startedFromStandby"]; ok {
		t.Errorf("step 1 started nothing from standby, yet shows it: %v", first)
	}
	if v, _ := lookup(m, "operator.peakRSSBytes"); v != float64(150<<20) {
		t.Errorf("operator.peakRSSBytes = %v", v)
	}

	step := second
	for _, k := range []string{"index", "description", "ok", "seconds", "message"} {
		if _, ok := step[k]; !ok {
			t.Errorf("step lacks %q: %v", k, step)
		}
	}
	if _, ok := steps[0].(map[string]any)["message"]; ok {
		t.Error("empty step message should be omitted")
	}
	sample := m["timeline"].([]any)[1].(map[string]any)
	for _, k := range []string{"t", "podsRunning", "podsPending", "nodesByPhase"} {
		if _, ok := sample[k]; !ok {
			t.Errorf("sample lacks %q: %v", k, sample)
		}
	}
}

func TestByPath(t *testing.T) {
	b := ByPath(map[Path][]float64{PathStandby: {3, 1, 2}, PathExisting: {0.5}})
	if b.Standby.Count != 3 || b.Standby.LatencySeconds != (Latency{P50: 2, P90: 3, P99: 3, Max: 3}) {
		t.Errorf("standby = %+v, want 3 pods with p50 2 and max 3", b.Standby)
	}
	if b.Cold.Count != 0 || b.Cold.LatencySeconds != (Latency{}) {
		t.Errorf("cold = %+v, want no pods", b.Cold)
	}
	if b.Existing.Count != 1 || b.Of(PathExisting) != &b.Existing {
		t.Errorf("existing = %+v, want 1 pod, and Of to return it", b.Existing)
	}
	defer func() {
		if recover() == nil {
			t.Error("ByPath accepted a path it does not know")
		}
	}()
	ByPath(map[Path][]float64{"warm": {1}})
}

func TestWriteJSONEmptyReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	if err := (&Report{Scenario: "empty", OK: true}).WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["failures"]; ok {
		t.Error("failures should be omitted when empty")
	}
	// Collections are written empty rather than null for consumers' sake.
	for _, k := range []string{"cloudCalls", "apiWrites", "steps", "timeline"} {
		if m[k] == nil {
			t.Errorf("%s is null, want empty", k)
		}
	}
}

func TestWriteJSONBadPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing-dir", "report.json")
	if err := (&Report{}).WriteJSON(path); err == nil {
		t.Error("expected an error for an unwritable path")
	}
}

// lookup follows a dotted path through decoded JSON objects. Map keys used
// in the tests (e.g. "patch NodeClaim") contain no dots.
func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, key := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

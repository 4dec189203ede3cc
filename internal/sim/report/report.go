// Package report holds the result of one simulator scenario run and renders it
// as JSON (for machines and CI), a plain-text table (for a terminal) and an SVG
// plot (for humans comparing runs). It is deliberately free of Kubernetes
// types so that it can be built and tested without a cluster.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
)

// Report is the outcome of one scenario run. The JSON field names are a
// stable contract: dashboards and CI scripts read them.
type Report struct {
	Scenario string `json:"scenario"`
	// Cloud is the cloud the scenario ran against: fake, or aws (moto).
	Cloud string `json:"cloud,omitempty"`
	OK    bool   `json:"ok"`
	// Failures says why OK is false: a wait that timed out, a failed
	// expectation, a broken invariant.
	Failures    []string `json:"failures,omitempty"`
	TimeScale   float64  `json:"timeScale"`
	WallSeconds float64  `json:"wallSeconds"`
	Pods        Pods     `json:"pods"`
	Nodes       Nodes    `json:"nodes"`
	// CloudCalls are the operator's cloud calls by operation: "Create", "Start" on the
	// fake cloud; "ec2:CreateFleet", "ssm:GetParameter" on aws, as moto received them.
	CloudCalls map[string]int `json:"cloudCalls"`
	// CloudErrors are the operator's calls that failed, by operation and error code
	// ("ec2:StartInstances IncorrectInstanceState"); aws only.
	CloudErrors map[string]int `json:"cloudErrors,omitempty"`
	// SimulatorCloudCalls are the simulator's own calls to the cloud (its kubelets'
	// polls of moto), apart from the operator's; aws only.
	SimulatorCloudCalls map[string]int `json:"simulatorCloudCalls,omitempty"`
	APIWrites           map[string]int `json:"apiWrites"` // API writes by Stratos, by "verb Kind"
	Invariants          Invariants     `json:"invariants"`
	Operator            Operator       `json:"operator"`
	Provisioning        Provisioning   `json:"provisioning"`
	// Interruptions and Repairs measure the interrupt and unhealthy steps; absent when
	// the scenario has none.
	Interruptions *Interruptions `json:"interruptions,omitempty"`
	Repairs       *Repairs       `json:"repairs,omitempty"`
	// Standby is the cost of each pool's warm pool over the operator's calendar, by
	// pool name; every pool the run saw is there.
	Standby map[string]StandbyHours `json:"standby"`
	// Scale shows whether what Stratos writes and asks grows with the cluster.
	Scale    Scale    `json:"scale"`
	Steps    []Step   `json:"steps"`
	Timeline []Sample `json:"timeline"`
}

// Pods summarises the workload pods the scenario created.
type Pods struct {
	Created        int     `json:"created"`
	Running        int     `json:"running"`
	LatencySeconds Latency `json:"latencySeconds"`
	// Latencies is every pod's creation→Running time in seconds. It feeds
	// the CDF plot; it is kept out of the JSON because it grows with the
	// pod count and the percentiles already summarise it.
	Latencies []float64 `json:"-"`
	// ByPath breaks the running pods and their latencies down by how each was
	// served (see Path).
	ByPath PodsByPath `json:"byPath"`
	// ByWorkload breaks the running pods and their latencies down by the burst that
	// made them, by its name (namespace/name outside the default namespace), so that
	// a scenario can report one phase of its load alone, such as the last day's peak.
	ByWorkload map[string]WorkloadPods `json:"byWorkload"`
}

// Path is how a pod was served: by a node started from standby for it, by a
// node launched for it (cold), or by a node that was there before it.
type Path string

const (
	PathStandby  Path = "standby"
	PathCold     Path = "cold"
	PathExisting Path = "existing"
)

// Paths lists the paths in the order reports show them: the warm pool's first.
var Paths = []Path{PathStandby, PathCold, PathExisting}

// PodsByPath holds the running pods of each path. Every path is always present
// in the JSON, with a count of 0 when no pod took it, so consumers need no
// checks for missing keys.
type PodsByPath struct {
	Standby  ServedPods `json:"standby"`
	Cold     ServedPods `json:"cold"`
	Existing ServedPods `json:"existing"`
}

// ServedPods are the running pods of one path.
type ServedPods struct {
	Count          int     `json:"count"`
	LatencySeconds Latency `json:"latencySeconds"`
	// Latencies are their creation→Running times in seconds, for the plot,
	// out of the JSON as Pods.Latencies is.
	Latencies []float64 `json:"-"`
}

// ByPath summarises each path's latencies, in seconds. Paths it does not know
// are an error in the caller, not data to drop silently: it panics on them.
func ByPath(latencies map[Path][]float64) PodsByPath {
	var b PodsByPath
	for path, values := range latencies {
		*b.Of(path) = ServedPods{Count: len(values), LatencySeconds: Percentiles(values), Latencies: values}
	}
	return b
}

// WorkloadPods are the running pods of one workload (burst).
type WorkloadPods struct {
	Count          int     `json:"count"`
	LatencySeconds Latency `json:"latencySeconds"`
	// Latencies are their creation→Running times in seconds, out of the JSON as
	// Pods.Latencies is.
	Latencies []float64 `json:"-"`
	// Paths counts them by how each was served; a pod whose node was never seen is in
	// none.
	Paths PathCounts `json:"paths"`
}

// PathCounts counts pods by path.
type PathCounts struct {
	Standby  int `json:"standby"`
	Cold     int `json:"cold"`
	Existing int `json:"existing"`
}

// WorkloadPod is one running pod of a workload: its latency in seconds, and its path
// ("" when unknown).
type WorkloadPod struct {
	LatencySeconds float64
	Path           Path
}

// ByWorkload summarises each workload's pods, by workload name.
func ByWorkload(pods map[string][]WorkloadPod) map[string]WorkloadPods {
	all := make(map[string]WorkloadPods, len(pods))
	for name, ran := range pods {
		w := WorkloadPods{Count: len(ran)}
		for _, pod := range ran {
			w.Latencies = append(w.Latencies, pod.LatencySeconds)
			switch pod.Path {
			case PathStandby:
				w.Paths.Standby++
			case PathCold:
				w.Paths.Cold++
			case PathExisting:
				w.Paths.Existing++
			}
		}
		w.LatencySeconds = Percentiles(w.Latencies)
		all[name] = w
	}
	return all
}

// Of returns the pods of path.
func (b *PodsByPath) Of(path Path) *ServedPods {
	switch path {
	case PathStandby:
		return &b.Standby
	case PathCold:
		return &b.Cold
	case PathExisting:
		return &b.Existing
	}
	panic(fmt.Sprintf("report: unknown path %q", path))
}

// Latency is a percentile summary, in seconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Nodes counts how capacity was obtained.
type Nodes struct {
	// StartedFromStandby are warm (standby) claims asked to run.
	StartedFromStandby int `json:"startedFromStandby"`
	// TakenWhileWarming are claims launched for standby and asked to run before their
	// warmup ended.
	TakenWhileWarming int `json:"takenWhileWarming"`
	// LaunchedCold are claims created to run pods.
	LaunchedCold int `json:"launchedCold"`
	// Peak is the most Ready Nodes seen at once.
	Peak int `json:"peak"`
}

// Invariants counts violations of properties that must always hold; any
// non-zero value is a bug in Stratos.
type Invariants struct {
	LeakedInstances    int `json:"leakedInstances"`
	DuplicateInstances int `json:"duplicateInstances"`
	OrphanClaims       int `json:"orphanClaims"`
}

// Operator describes the health of the Stratos process under test.
type Operator struct {
	Restarts     int   `json:"restarts"`
	PeakRSSBytes int64 `json:"peakRSSBytes"`
}

// Provisioning measures controller overhead on the warm path.
type Provisioning struct {
	// StartCallLatencySeconds runs from a pod being marked Unschedulable to
	// the cloud Start call being issued for a standby node.
	StartCallLatencySeconds Latency `json:"startCallLatencySeconds"`
	// DecisionSeconds is the time of each provisioning pass, in wall seconds, as the
	// operator measures it; absent when its metrics could not be read.
	DecisionSeconds *DecisionTime `json:"decisionSeconds,omitempty"`
}

// Step is the outcome of one scenario step.
type Step struct {
	Index       int     `json:"index"`
	Description string  `json:"description"`
	OK          bool    `json:"ok"`
	Seconds     float64 `json:"seconds"`
	Message     string  `json:"message,omitempty"`
	// CloudCalls are the operator's cloud calls during the step, by operation, as in
	// Report.CloudCalls; a burst's calls are those of the steps that wait for it.
	CloudCalls map[string]int `json:"cloudCalls,omitempty"`
	// LaunchedCold, StartedFromStandby and TakenWhileWarming count the claims of each
	// kind (as Nodes counts them) that came during the step.
	LaunchedCold       int `json:"launchedCold,omitempty"`
	StartedFromStandby int `json:"startedFromStandby,omitempty"`
	TakenWhileWarming  int `json:"takenWhileWarming,omitempty"`
}

// Sample is a point-in-time snapshot of the simulated cluster.
type Sample struct {
	Seconds     float64 `json:"t"`
	PodsRunning int     `json:"podsRunning"`
	PodsPending int     `json:"podsPending"`
	// NodesByPhase counts NodeClaims by phase, such as Launching, Warming,
	// Standby, Starting, Running, Stopping, Terminating.
	NodesByPhase map[string]int `json:"nodesByPhase"`
}

// Percentiles returns nearest-rank percentiles of values. It sorts a copy so
// callers can keep using their slice in its original (e.g. creation) order.
// NaN values are ignored because they would make the ordering meaningless.
func Percentiles(values []float64) Latency {
	sorted := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			sorted = append(sorted, v)
		}
	}
	if len(sorted) == 0 {
		return Latency{}
	}
	sort.Float64s(sorted)
	return Latency{
		P50: nearestRank(sorted, 50),
		P90: nearestRank(sorted, 90),
		P99: nearestRank(sorted, 99),
		Max: sorted[len(sorted)-1],
	}
}

// title names the scenario for human-facing output, which should never start
// with a bare colon just because a test built a report without a name.
func (r *Report) title() string {
	status := "OK"
	if !r.OK {
		status = "FAILED"
	}
	name := r.Scenario
	if name == "" {
		name = "(unnamed scenario)"
	}
	if r.Cloud != "" {
		name += " on " + r.Cloud
	}
	return name + ": " + status
}

// nearestRank picks the smallest value such that at least p percent of the
// values are less than or equal to it. Unlike interpolation it always returns
// an observed latency, which is easier to reason about in small runs.
func nearestRank(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return sorted[rank-1]
}

// WriteJSON writes r as indented JSON to path, replacing any existing file.
// Nil maps and slices are written as {} and [] rather than null so that
// consumers (jq, dashboards) can index them without null checks.
func (r *Report) WriteJSON(path string) error {
	out := *r
	if out.CloudCalls == nil {
		out.CloudCalls = map[string]int{}
	}
	if out.APIWrites == nil {
		out.APIWrites = map[string]int{}
	}
	if out.Steps == nil {
		out.Steps = []Step{}
	}
	if out.Timeline == nil {
		out.Timeline = []Sample{}
	}
	if out.Standby == nil {
		out.Standby = map[string]StandbyHours{}
	}
	if out.Scale.APIWritesPerNode == nil {
		out.Scale.APIWritesPerNode = map[string]float64{}
	}
	if out.Scale.NodePoolStatusWrites == nil {
		out.Scale.NodePoolStatusWrites = map[string]WriteRate{}
	}
	if out.Scale.CloudCallsPerMinute == nil {
		out.Scale.CloudCallsPerMinute = map[string]MinuteRate{}
	}
	if out.Pods.ByWorkload == nil {
		out.Pods.ByWorkload = map[string]WorkloadPods{}
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding report: %w", err)
	}
	data = append(data, '\n')
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

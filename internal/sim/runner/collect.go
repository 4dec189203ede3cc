package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"slices"
	"time"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/invariants"
	"github.com/stratos-sh/stratos/internal/sim/report"
)

// settleTimeout is how long, in wall time, the cloud and the cluster get to agree after
// the last step before a disagreement counts as a broken invariant: a claim created a
// moment ago has no instance yet, and that is no leak.
const settleTimeout = 30 * time.Second

// checkInvariants waits for the invariants to hold and reports what still breaks them
// at the deadline.
func (r *run) checkInvariants(ctx context.Context) {
	deadline := time.Now().Add(settleTimeout)
	for {
		result, err := invariants.Check(ctx, r.client, ownedView{r.cloud}, ClusterName)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			r.report.Invariants = report.Invariants{
				LeakedInstances:    result.LeakedInstances,
				DuplicateInstances: result.DuplicateInstances,
				OrphanClaims:       result.OrphanClaims,
			}
			if err != nil {
				r.fail("invariants broken %s after the last step: %v", settleTimeout, err)
			}
			return
		}
		if pause(ctx, pollInterval) != nil {
			return
		}
	}
}

// ownedView shows the invariants the instances the operator owns.
type ownedView struct{ cloud simCloud }

func (v ownedView) Instances() []cloudprovider.Instance { return v.cloud.owned() }

// collect fills the report from what the run observed.
func (r *run) collect() {
	rep := r.report
	rep.WallSeconds = time.Since(r.started).Seconds()
	for _, problem := range r.cloud.problems() {
		r.fail("%s", problem)
	}
	times := r.observer.podTimes()
	rep.Pods.Created = len(times)
	registrations, starts := r.observer.nodeRegistrations(), startsByInstance(r.cloud.startCalls())
	byPath, byWorkload := map[report.Path][]float64{}, map[string][]report.WorkloadPod{}
	for _, t := range times {
		if t.running.IsZero() {
			continue
		}
		latency := t.running.Sub(t.created).Seconds() * r.scale
		rep.Pods.Running++
		rep.Pods.Latencies = append(rep.Pods.Latencies, latency)
		path, ok := servingPath(t.created, t.running, registrations[t.nodeName], starts)
		if ok {
			byPath[path] = append(byPath[path], latency)
		}
		byWorkload[workloadKey(t.owner)] = append(byWorkload[workloadKey(t.owner)], report.WorkloadPod{LatencySeconds: latency, Path: path})
	}
	rep.Pods.LatencySeconds = report.Percentiles(rep.Pods.Latencies)
	rep.Pods.ByPath = report.ByPath(byPath)
	rep.Pods.ByWorkload = report.ByWorkload(byWorkload)
	rep.Standby = r.standbyHours()
	rep.Provisioning.StartCallLatencySeconds = report.Percentiles(startCallLatencies(times, registrations, r.cloud.startCalls(), r.observer.startedFromStandby))
	rep.Interruptions, rep.Repairs = r.recoveries(time.Now())
	counts := r.observer.counters()
	rep.Nodes.StartedFromStandby, rep.Nodes.TakenWhileWarming, rep.Nodes.LaunchedCold = counts.startedFromStandby, counts.takenWhileWarming, counts.launchedCold
	r.cloud.record(rep)
	rep.APIWrites = auditedWrites(r.opts.WorkDir + "/audit.log")
	rep.Provisioning.DecisionSeconds = r.decisions.decisionTime()
	scale, err := r.scaleFigures()
	if err != nil {
		r.fail("measuring the scale figures: %v", err)
	}
	rep.Scale = scale
	rep.Operator.Restarts = r.operator.Restarts()
	rep.Operator.PeakRSSBytes = r.operator.PeakRSS()
	r.mu.Lock()
	rep.Timeline = r.timeline
	rep.Nodes.Peak = r.peakNodes
	rep.Failures = append(rep.Failures, r.failures...)
	r.mu.Unlock()
	rep.OK = len(rep.Failures) == 0
}

// startCallLatencies measures the warm path's controller overhead: the wall time from a
// pod marked Unschedulable to the StartInstances call that started standby capacity for
// it. Which pod kube-scheduler binds to which node is its own choice, so pods are matched
// to capacity in order, as provisioning serves them (standby before anything launched):
// each instance started from standby (fromStandby) offers as many slots as workload
// pods ran on it, in the order of the calls that started them, and the pods marked
// first take the slots. A pod's instance is that of the Node registration that served
// it, as the observer saw it: the Node may be gone by the end of the run, terminated
// when the load went. It is controller overhead, which does not scale with the
// physics, so it is in wall seconds.
func startCallLatencies(times []podTimes, registrations map[string][]nodeRegistration, calls []startCall, fromStandby func(instanceID string) bool) []float64 {
	podsOn := map[string]int{}
	var marks []time.Time
	for _, t := range times {
		if t.unschedulable.IsZero() {
			continue
		}
		marks = append(marks, t.unschedulable)
		if node, ok := registrationServing(registrations[t.nodeName], t.running); ok {
			podsOn[instanceOf(node.providerID)]++
		}
	}
	slices.SortFunc(marks, time.Time.Compare)
	var slots []time.Time
	counted := map[string]bool{}
	for _, call := range calls {
		for _, id := range call.ids {
			if !counted[id] && fromStandby(id) {
				counted[id] = true
				for range podsOn[id] {
					slots = append(slots, call.at)
				}
			}
		}
	}
	latencies := make([]float64, 0, len(slots))
	for i, slot := range slots[:min(len(slots), len(marks))] {
		latencies = append(latencies, max(slot.Sub(marks[i]).Seconds(), 0))
	}
	return latencies
}

// auditedWrites counts the operator's writes in the API server's audit log by verb and
// resource, such as "patch nodeclaims/status". The log survives operator crashes, which
// the operator's own metrics would not.
func auditedWrites(path string) map[string]int {
	counts := map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return counts
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var event struct {
			Stage     string `json:"stage"`
			Verb      string `json:"verb"`
			ObjectRef struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
		}
		if json.Unmarshal(scanner.Bytes(), &event) != nil || event.Stage != "ResponseComplete" {
			continue
		}
		resource := event.ObjectRef.Resource
		if event.ObjectRef.Subresource != "" {
			resource += "/" + event.ObjectRef.Subresource
		}
		counts[event.Verb+" "+resource]++
	}
	return counts
}

package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/invariants"
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
		result, err := invariants.Check(ctx, r.client, r.cloud, ClusterName)
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

// collect fills the report from what the run observed.
func (r *run) collect() {
	rep := r.report
	rep.WallSeconds = time.Since(r.started).Seconds()
	times := r.observer.podTimes()
	rep.Pods.Created = len(times)
	for _, t := range times {
		if !t.running.IsZero() {
			rep.Pods.Running++
			rep.Pods.Latencies = append(rep.Pods.Latencies, t.running.Sub(t.created).Seconds()*r.scale)
		}
	}
	rep.Pods.LatencySeconds = report.Percentiles(rep.Pods.Latencies)
	rep.Provisioning.StartCallLatencySeconds = report.Percentiles(r.startCallLatencies(times))
	rep.Nodes.StartedFromStandby, rep.Nodes.LaunchedCold = r.observer.counters()
	rep.CloudCalls = r.cloud.Calls()
	rep.APIWrites = auditedWrites(r.opts.WorkDir + "/audit.log")
	rep.Operator.Restarts = r.operator.Restarts()
	rep.Operator.PeakRSSBytes = r.operator.PeakRSS()
	r.mu.Lock()
	rep.Timeline = r.timeline
	rep.Nodes.Peak = r.peakNodes
	rep.Failures = append(rep.Failures, r.failures...)
	r.mu.Unlock()
	rep.OK = len(rep.Failures) == 0
}

// startCallLatencies measures the warm path's controller overhead: for each pod that
// ran on a node started from standby, the wall time from the pod marked Unschedulable
// to the StartInstances call that started capacity for it. Which node the scheduler
// binds a pod to is its own choice, so pods are matched to capacity in order: the
// started instances, in the order of the calls that started them, each offer as many
// slots as workload pods ran on them, and the pods take the slots in the order they were
// marked, as provisioning serves them. It is controller overhead, which does not scale
// with the physics, so it is in wall seconds.
func (r *run) startCallLatencies(times []podTimes) []float64 {
	nodes := &corev1.NodeList{}
	if err := r.client.List(context.Background(), nodes); err != nil {
		return nil
	}
	instanceOfProvider := map[string]string{}
	for _, inst := range r.cloud.Instances() {
		instanceOfProvider[inst.ProviderID] = inst.ID
	}
	instanceOfNode := map[string]string{}
	for _, n := range nodes.Items {
		instanceOfNode[n.Name] = instanceOfProvider[n.Spec.ProviderID]
	}
	calls := r.recording.startCalls()
	started := map[string]bool{}
	for _, call := range calls {
		for _, id := range call.ids {
			started[id] = true
		}
	}
	podsOn := map[string]int{}
	var marks []time.Time
	for _, t := range times {
		id := instanceOfNode[t.nodeName]
		if t.unschedulable.IsZero() || !started[id] {
			continue
		}
		podsOn[id]++
		marks = append(marks, t.unschedulable)
	}
	slices.SortFunc(marks, time.Time.Compare)
	var slots []time.Time
	counted := map[string]bool{}
	for _, call := range calls {
		for _, id := range call.ids {
			if !counted[id] {
				counted[id] = true
				for range podsOn[id] {
					slots = append(slots, call.at)
				}
			}
		}
	}
	latencies := make([]float64, 0, len(marks))
	for i, mark := range marks {
		latencies = append(latencies, max(slots[i].Sub(mark).Seconds(), 0))
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

package runner

import (
	"slices"
	"testing"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The start-call latency maps each pod to the instance it ran on through the Nodes the
// observer saw, so a Node terminated before the end of the run (give-back, consolidation)
// still counts its pods. A reused Node name maps each pod to the instance that served it.
func TestStartCallLatencyCountsPodsOfNodesGoneByTheEnd(t *testing.T) {
	o := newObserver()
	nodes := o.nodeHandler()
	nodes.OnAdd(nodeNamed("ip-10-0-0-1", "aws:///us-east-1a/i-warm"), false)
	nodes.OnAdd(nodeNamed("ip-10-0-0-2", "aws:///us-east-1a/i-cold"), false)
	// Both Nodes go when the load goes: their instances are terminated.
	nodes.OnDelete(nodeNamed("ip-10-0-0-1", "aws:///us-east-1a/i-warm"))
	nodes.OnDelete(nodeNamed("ip-10-0-0-2", "aws:///us-east-1a/i-cold"))
	warm := claimIn(v1beta1.DesiredStandby, v1beta1.PhaseStandby)
	warm.Status.InstanceID = "i-warm"
	started := warm.DeepCopy()
	started.Spec.DesiredState = v1beta1.DesiredRunning
	o.claimHandler().OnUpdate(warm, started)

	seen := time.Now()
	marked := seen.Add(time.Second)
	times := []podTimes{
		{created: marked, unschedulable: marked, running: marked.Add(20 * time.Second), nodeName: "ip-10-0-0-1"},
		{created: marked, unschedulable: marked.Add(time.Second), running: marked.Add(20 * time.Second), nodeName: "ip-10-0-0-1"},
		{created: marked, unschedulable: marked.Add(2 * time.Second), running: marked.Add(50 * time.Second), nodeName: "ip-10-0-0-2"},
	}
	calls := []startCall{{at: marked.Add(3 * time.Second), ids: []string{"i-warm"}}}
	got := startCallLatencies(times, o.nodeRegistrations(), calls, o.startedFromStandby)
	if want := []float64{3, 2}; !slices.Equal(got, want) {
		t.Fatalf("latencies %v, want %v: the two pods of the started instance, whose Node is gone", got, want)
	}

	// EC2 names Nodes after private addresses and reuses them: the pod ran on the
	// instance registered under the name when it ran, not on a later one.
	registrations := map[string][]nodeRegistration{"ip-10-0-0-1": {
		{at: seen, providerID: "aws:///us-east-1a/i-warm"},
		{at: marked.Add(time.Minute), providerID: "aws:///us-east-1a/i-later"},
	}}
	got = startCallLatencies(times[:1], registrations, calls, o.startedFromStandby)
	if want := []float64{3}; !slices.Equal(got, want) {
		t.Fatalf("latencies %v, want %v: the pod ran on i-warm, not on the name's later instance", got, want)
	}
}

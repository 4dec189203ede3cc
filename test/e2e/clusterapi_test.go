package e2e

import (
	"testing"

	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/test/harness"
)

// clusterAPITimeScale is the time scale of the scenarios on clusterapi: slower than on
// the fake cloud's five, because CAPI's controllers reconcile in real time (the Machine
// of a booted SimMachine gets its node reference on CAPI's own schedule), and their
// process shares the two cores with the control plane, the operator and the simulator.
const clusterAPITimeScale = "--time-scale=2"

// simulateOnClusterAPI runs a scenario with --cloud=clusterapi, CAPI's core manager built
// first, and checks what every run on clusterapi shows beyond its scenario: that it ran
// there, that the operator's Machines went through CAPI to the simulator's provider, and
// that this provider launched and ended the machines in the fake cloud.
func simulateOnClusterAPI(t *testing.T, scenario string) *report.Report {
	t.Helper()
	if _, err := harness.EnsureTools("capi-manager"); err != nil {
		t.Fatal(err)
	}
	rep := simulate(t, scenario, clusterAPITimeScale, "--cloud=clusterapi")
	if rep.Cloud != "clusterapi" {
		t.Errorf("ran on %q, want clusterapi", rep.Cloud)
	}
	if rep.CloudCalls["CreateMachine"] == 0 || rep.APIWrites["create machines"] == 0 {
		t.Errorf("cloud calls %v, API writes %v: the operator created no Machine", rep.CloudCalls, rep.APIWrites)
	}
	// Each Ready Node runs on a machine the provider launched. Not one per Machine: a
	// Machine deleted before CAPI asked for its infrastructure (a refill the load no
	// longer needs) gets none, as one run showed (20 machines for 21 Machines, 11 deleted).
	if launched := rep.SimulatorCloudCalls["Create"]; launched == 0 || launched < rep.Nodes.Peak {
		t.Errorf("the simulator's provider launched %d machines in the fake cloud for a peak of %d Ready Nodes: %v",
			launched, rep.Nodes.Peak, rep.SimulatorCloudCalls)
	}
	return rep
}

// logPaths logs the pod latency by serving path, the figures the closing note
// asks for.
func logPaths(t *testing.T, name string, rep *report.Report) {
	t.Helper()
	for _, path := range report.Paths {
		served := rep.Pods.ByPath.Of(path)
		t.Logf("%s: %s pods %d: p50 %.1fs p90 %.1fs max %.1fs (scenario time)", name, path, served.Count,
			served.LatencySeconds.P50, served.LatencySeconds.P90, served.LatencySeconds.Max)
	}
	t.Logf("%s: peak %d nodes, Machine writes %v, the provider's fake-cloud calls %v, wall %.0fs",
		name, rep.Nodes.Peak, rep.CloudCalls, rep.SimulatorCloudCalls, rep.WallSeconds)
}

// TestClusterAPIQuickstart runs the demo's scenario on Cluster API: the same file as on
// the fake cloud, its FakeNodeClass made a ClusterAPINodeClass by the simulator. The
// warm pool's machines are powered off through the SimMachines and powered on for the
// burst, and the rest of the burst runs on Machines created for it.
func TestClusterAPIQuickstart(t *testing.T) {
	runInTurn(t)
	rep := simulateOnClusterAPI(t, "quickstart.yaml")
	checkClean(t, rep, 40)
	if rep.Nodes.StartedFromStandby < 5 {
		t.Errorf("started from standby: %d, want at least the pool's 5", rep.Nodes.StartedFromStandby)
	}
	if rep.CloudCalls["CreateMachine"] < 5 || rep.CloudCalls["PowerOff"] < 5 || rep.CloudCalls["PowerOn"] < 5 {
		t.Errorf("cloud calls %v: want at least the 5 warm Machines, powered off and on", rep.CloudCalls)
	}
	if rep.Provisioning.StartCallLatencySeconds.Max <= 0 {
		t.Errorf("the power-on latency was not measured: %+v", rep.Provisioning.StartCallLatencySeconds)
	}
	checkServedFromStandbyFaster(t, rep)
	logPaths(t, "quickstart on clusterapi", rep)
}

// TestClusterAPIWindows runs windows.yaml on Cluster API, as 5-Spot schedules Machines:
// the pre-warm before office hours creates Machines, and the night window deletes every
// one of them.
func TestClusterAPIWindows(t *testing.T) {
	runInTurn(t)
	rep := simulateOnClusterAPI(t, "windows.yaml")
	wantOK(t, rep)
	var prewarm, night *report.Step
	for i := range rep.Steps {
		switch step := &rep.Steps[i]; step.Description {
		case "from 07:50, before the office opens, four standby nodes and one node running without pods":
			prewarm = step
		case "at night nothing of the pool is left":
			night = step
		}
	}
	if prewarm == nil || night == nil {
		t.Fatalf("steps %+v: the pre-warm or the night step is missing", rep.Steps)
	}
	// One standby machine before the window; four standby and one running in it.
	if prewarm.CloudCalls["CreateMachine"] < 4 {
		t.Errorf("the window's pre-warm made %v, want at least 4 Machines created", prewarm.CloudCalls)
	}
	if night.CloudCalls["DeleteMachine"] == 0 {
		t.Errorf("the night made %v, want Machines deleted", night.CloudCalls)
	}
	if created, deleted := rep.CloudCalls["CreateMachine"], rep.CloudCalls["DeleteMachine"]; created != deleted {
		t.Errorf("%d Machines created and %d deleted: the night should leave none", created, deleted)
	}
	logPaths(t, "windows on clusterapi", rep)
}

// TestClusterAPIStandby runs clusterapi-standby.yaml: four machines warmed and powered
// off, a burst served by powering them on, the rest by Machines created for it, and the
// empty machines powered off again when the load goes.
func TestClusterAPIStandby(t *testing.T) {
	runInTurn(t)
	rep := simulateOnClusterAPI(t, "clusterapi-standby.yaml")
	checkClean(t, rep, 35)
	if rep.Nodes.StartedFromStandby < 4 {
		t.Errorf("started from standby: %d, want the 4 powered-off machines", rep.Nodes.StartedFromStandby)
	}
	if rep.CloudCalls["PowerOn"] < 4 || rep.CloudCalls["PowerOff"] < 8 {
		t.Errorf("cloud calls %v: want the 4 machines powered on, and powered off twice (warm-up and give-back)", rep.CloudCalls)
	}
	if rep.SimulatorCloudCalls["Start"] < 4 || rep.SimulatorCloudCalls["Stop"] < 8 {
		t.Errorf("the provider's fake-cloud calls %v: want the power changes to reach the machines", rep.SimulatorCloudCalls)
	}
	checkServedFromStandbyFaster(t, rep)
	logPaths(t, "standby on clusterapi", rep)
}

package e2e

import (
	"testing"

	"github.com/stratos-sh/stratos/internal/sim/report"
)

// TestCapacityBuffer runs capacity-buffer.yaml at five times real time: an
// active-capacity CapacityBuffer of a Deployment's template keeps room for four more of
// its pods on two running nodes of a pool without a warm pool; the Deployment doubles,
// and its four new pods run on that room, none on a node launched or started for them;
// then the buffer refills with two nodes launched after the burst, and no more. The
// operator's consolidateAfter (5s) runs in real time, shorter than the scenario's wait
// of 60 scenario seconds (12 s) at this scale, so the test shows consolidation keeping
// the room too.
func TestCapacityBuffer(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "capacity-buffer.yaml", "--time-scale=5")
	wantOK(t, rep)
	if rep.Pods.Created != 8 || rep.Pods.Running != 8 {
		t.Errorf("pods created %d, running %d; want the Deployment's 8", rep.Pods.Created, rep.Pods.Running)
	}
	// The simulator's own reading of each pod's node, apart from the scenario's
	// expectations: the first four pods on nodes launched for them, the burst's four on
	// nodes up before it came, none from standby.
	byPath := rep.Pods.ByPath
	if byPath.Cold.Count != 4 || byPath.Existing.Count != 4 || byPath.Standby.Count != 0 {
		t.Errorf("pods by path: %d cold, %d existing, %d standby; want 4 cold (before the buffer), 4 existing (the burst), none from standby",
			byPath.Cold.Count, byPath.Existing.Count, byPath.Standby.Count)
	}
	if byPath.Existing.LatencySeconds.Max >= byPath.Cold.LatencySeconds.P50 {
		t.Errorf("the burst's slowest pod took %.1fs, not under the cold launches' p50 %.1fs", byPath.Existing.LatencySeconds.Max, byPath.Cold.LatencySeconds.P50)
	}
	if rep.Nodes.StartedFromStandby != 0 || rep.Nodes.TakenWhileWarming != 0 {
		t.Errorf("started from standby %d, taken while warming %d; want none: the pool has no warm pool", rep.Nodes.StartedFromStandby, rep.Nodes.TakenWhileWarming)
	}
	before, after := launchesAround(t, rep, "mark burst")
	// Two nodes for the Deployment, two for the buffer's room, then two to refill it.
	if before != 4 || after != 2 || rep.Nodes.LaunchedCold != 6 || rep.Nodes.Peak != 6 {
		t.Errorf("launched %d before the burst and %d after (%d in all), peak %d nodes; want 4, then the 2 of the refill, 6 at peak",
			before, after, rep.Nodes.LaunchedCold, rep.Nodes.Peak)
	}
	t.Logf("burst onto the buffer's room: p50 %.1fs, max %.1fs (scenario time); cold launches p50 %.1fs; refill: %d launches after the burst; wall %.0fs",
		byPath.Existing.LatencySeconds.P50, byPath.Existing.LatencySeconds.Max, byPath.Cold.LatencySeconds.P50, after, rep.WallSeconds)
}

// launchesAround sums the claims launched cold in the steps before and after the step
// described as mark, from the report's per-step counts.
func launchesAround(t *testing.T, rep *report.Report, mark string) (before, after int) {
	t.Helper()
	marked := false
	for _, step := range rep.Steps {
		switch {
		case step.Description == mark:
			marked = true
		case marked:
			after += step.LaunchedCold
		default:
			before += step.LaunchedCold
		}
	}
	if !marked {
		t.Fatalf("the report has no step %q: %+v", mark, rep.Steps)
	}
	return before, after
}

// TestCapacityBufferStandby runs capacity-buffer-standby.yaml at five times real time: a
// stratos.sh/standby-capacity buffer keeps room for four pods on two stopped nodes of a
// pool without a warm pool of its own; the Deployment grows by four, the two nodes are
// started for the new pods with no cold launch, and the buffer refills its room with
// two new standby nodes.
func TestCapacityBufferStandby(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "capacity-buffer-standby.yaml", "--time-scale=5")
	wantOK(t, rep)
	if rep.Pods.Created != 6 || rep.Pods.Running != 6 {
		t.Errorf("pods created %d, running %d; want the Deployment's 6", rep.Pods.Created, rep.Pods.Running)
	}
	byPath := rep.Pods.ByPath
	if byPath.Cold.Count != 2 || byPath.Standby.Count != 4 || byPath.Existing.Count != 0 {
		t.Errorf("pods by path: %d cold, %d standby, %d existing; want 2 cold (before the buffer) and 4 from standby (the burst)",
			byPath.Cold.Count, byPath.Standby.Count, byPath.Existing.Count)
	}
	if byPath.Standby.LatencySeconds.P50 >= byPath.Cold.LatencySeconds.P50 {
		t.Errorf("pods served from standby: p50 %.1fs, not under the cold launches' p50 %.1fs", byPath.Standby.LatencySeconds.P50, byPath.Cold.LatencySeconds.P50)
	}
	// One launch for the Deployment; the buffer's standby nodes and their refills are
	// launched to stand by, which launchedCold does not count.
	if rep.Nodes.LaunchedCold != 1 || rep.Nodes.StartedFromStandby != 2 || rep.Nodes.TakenWhileWarming != 0 {
		t.Errorf("launched cold %d, started from standby %d, taken while warming %d; want 1, 2 and 0",
			rep.Nodes.LaunchedCold, rep.Nodes.StartedFromStandby, rep.Nodes.TakenWhileWarming)
	}
	if rep.CloudCalls["Create"] == 0 || rep.CloudCalls["Start"] == 0 {
		t.Errorf("cloud calls %v: want the standby nodes' launches and the burst's starts", rep.CloudCalls)
	}
	t.Logf("burst from the buffer's standby nodes: p50 %.1fs, max %.1fs (scenario time); cold launches p50 %.1fs; wall %.0fs",
		byPath.Standby.LatencySeconds.P50, byPath.Standby.LatencySeconds.Max, byPath.Cold.LatencySeconds.P50, rep.WallSeconds)
}

package e2e

import (
	"testing"
)

// What TestScale bounds at 500 pods. The memory and status-write bounds are issue 33's
// targets and hold with room on a loaded CI machine. The others are looser than the
// targets, which scale-5000.yaml states and docs/simulator.md measures on a quiet
// machine: in CI this scenario runs beside two others, so its decision times stretch
// with the machine's load, and a loaded operator re-plans more pods and writes more
// (see docs/simulator.md#scale). They catch a write or a pass that grows with the
// cluster, not a millisecond. The describes are bounded at the target: the pacing of
// describe calls holds it on any machine.
const (
	maxPoolStatusWritesPerSecond = 1.0
	maxOperatorRSSBytes          = 300 << 20
	maxDecisionP99Seconds        = 5.0
	// maxDescribesPerMinute bounds the describes (Get and List on the fake cloud) in the
	// busiest minute of wall time. Describe calls start at least a second apart, so 60,
	// and one more where a span between the report's samples holds a call at each end.
	maxDescribesPerMinute = 61
)

// TestScale runs scale-500.yaml at five times real time: 500 pods onto about 50 nodes
// from a warm pool and cold launches, then given back. Every pod must run and the
// scenario's own bounds must hold (its writes per node from launch to Running among
// them); the figures below are checked again from the report, so that a scenario
// edited to loosen its bounds does not loosen the test.
func TestScale(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "scale-500.yaml", "--time-scale=5")
	checkClean(t, rep, 500)
	s := rep.Scale
	if s.NodesLaunchedOrStarted < 50 {
		t.Errorf("%d nodes launched or started, want at least the 50 the burst needs", s.NodesLaunchedOrStarted)
	}
	if len(s.NodePoolStatusWrites) == 0 {
		t.Errorf("no NodePool status write seen")
	}
	for pool, w := range s.NodePoolStatusWrites {
		if w.PeakPerSecond > maxPoolStatusWritesPerSecond {
			t.Errorf("pool %s: status written %.1f times a second at its busiest, want at most %g", pool, w.PeakPerSecond, maxPoolStatusWritesPerSecond)
		}
	}
	for _, op := range []string{"Get", "List"} {
		if m := s.CloudCallsPerMinute[op]; m.Peak > maxDescribesPerMinute {
			t.Errorf("%s: %d calls in the busiest minute, want at most %d", op, m.Peak, maxDescribesPerMinute)
		}
	}
	d := rep.Provisioning.DecisionSeconds
	switch {
	case d == nil || d.Passes == 0:
		t.Errorf("the operator's decision time was not measured")
	case d.P99 >= maxDecisionP99Seconds:
		t.Errorf("decision time p99 %.3fs, want under %gs (CI bound; the target is 1 s)", d.P99, maxDecisionP99Seconds)
	}
	if rep.Operator.PeakRSSBytes >= maxOperatorRSSBytes {
		t.Errorf("operator peak RSS %.0f MiB, want under 300", float64(rep.Operator.PeakRSSBytes)/(1<<20))
	}
	t.Logf("scale-500 at 5x: %.1f writes and %.1f Events per node over %d nodes, decision p99 %+v, peak RSS %.0f MiB, calls per minute %v, wall %.0fs",
		s.APIWritesPerNodeTotal, s.EventsPerNode, s.NodesLaunchedOrStarted, d, float64(rep.Operator.PeakRSSBytes)/(1<<20), s.CloudCallsPerMinute, rep.WallSeconds)
}

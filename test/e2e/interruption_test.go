package e2e

import (
	"testing"

	"github.com/stratos-sh/stratos/internal/sim/report"
)

// The interruption and repair scenarios run at twice real time, not five: the operator's
// reaction (reading the queue, cordoning, starting standby, draining), its
// consolidateAfter and its repair tolerations run in real time, and at five times a
// 30-second target leaves them 6 s of wall time on a loaded machine.

// wantAllRan fails the test unless the run is ok and every pod it created ran: at least
// the workload and one replacement per displaced pod (consolidation may move pods again).
func wantAllRan(t *testing.T, rep *report.Report, atLeast int) {
	t.Helper()
	wantOK(t, rep)
	if rep.Pods.Created < atLeast || rep.Pods.Running != rep.Pods.Created {
		t.Errorf("pods created %d, ran %d; want every pod to have run, at least %d", rep.Pods.Created, rep.Pods.Running, atLeast)
	}
}

// wantInterruptions fails the test unless the report measured the interruption of
// instances holding pods pods, and returns the section.
func wantInterruptions(t *testing.T, rep *report.Report, instances, pods int) *report.Interruptions {
	t.Helper()
	in := rep.Interruptions
	if in == nil {
		t.Fatal("the report has no interruptions section")
	}
	if in.Instances != instances || in.PodsDisplaced != pods || in.PodsReplaced != pods {
		t.Errorf("interrupted %d instances, displaced %d pods, replaced %d; want %d, %d and %d",
			in.Instances, in.PodsDisplaced, in.PodsReplaced, instances, pods, pods)
	}
	replacements := in.Replacements.Standby + in.Replacements.Cold + in.Replacements.Existing
	if replacements != in.PodsReplaced || in.RecoverySeconds.P50 <= 0 || in.RecoverySeconds.Max < in.RecoverySeconds.P99 {
		t.Errorf("implausible figures: %+v", in)
	}
	return in
}

// TestSpotInterruption runs spot-interruption.yaml: with an on-demand warm pool, every
// pod of the interrupted spot nodes runs elsewhere before its node dies, none is killed,
// p99 under 30 s, and the pool goes back to spot once spot is offered again.
func TestSpotInterruption(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "spot-interruption.yaml", "--time-scale=2")
	wantAllRan(t, rep, 21+21)
	in := wantInterruptions(t, rep, 3, 21)
	if in.PodsKilled != 0 || in.RecoverySeconds.P99 >= 30 {
		t.Errorf("killed %d, p99 %.1f s; want 0 and under 30 s", in.PodsKilled, in.RecoverySeconds.P99)
	}
	if in.Replacements.Standby == 0 {
		t.Errorf("no replacement ran on a node started from standby: %+v", in.Replacements)
	}
	t.Logf("spot interruption with standby: %d pods displaced, p50 %.1f s, p90 %.1f s, p99 %.1f s, max %.1f s, killed %d; replacements from standby %d, cold %d, existing %d",
		in.PodsDisplaced, in.RecoverySeconds.P50, in.RecoverySeconds.P90, in.RecoverySeconds.P99, in.RecoverySeconds.Max, in.PodsKilled,
		in.Replacements.Standby, in.Replacements.Cold, in.Replacements.Existing)
}

// TestSpotInterruptionCold runs spot-interruption-cold.yaml: without a warm pool, the
// replacements launch cold; every pod ends Running, and the figures are logged beside
// the warm pool's.
func TestSpotInterruptionCold(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "spot-interruption-cold.yaml", "--time-scale=2")
	wantAllRan(t, rep, 21+21)
	in := wantInterruptions(t, rep, 3, 21)
	if in.Replacements.Standby != 0 || in.Replacements.Cold == 0 {
		t.Errorf("replacements %+v: want cold launches and no standby", in.Replacements)
	}
	t.Logf("spot interruption without standby: %d pods displaced, p50 %.1f s, p90 %.1f s, p99 %.1f s, max %.1f s, killed %d; replacements cold %d, existing %d",
		in.PodsDisplaced, in.RecoverySeconds.P50, in.RecoverySeconds.P90, in.RecoverySeconds.P99, in.RecoverySeconds.Max, in.PodsKilled,
		in.Replacements.Cold, in.Replacements.Existing)
}

// TestNodeRepair runs node-repair.yaml: a node that reports Ready False, then one that
// reports KernelDeadlock, is replaced, and its pods run again.
func TestNodeRepair(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "node-repair.yaml", "--time-scale=2")
	wantAllRan(t, rep, 28+14)
	repairs := rep.Repairs
	if repairs == nil {
		t.Fatal("the report has no repairs section")
	}
	if repairs.Nodes != 2 || repairs.PodsDisplaced != 14 || repairs.PodsReplaced != 14 {
		t.Errorf("repairs %+v: want 2 nodes and 14 pods displaced and replaced", repairs)
	}
	if rep.Interruptions != nil {
		t.Errorf("a scenario without interruptions reports some: %+v", rep.Interruptions)
	}
	t.Logf("node repair: %d pods displaced, unhealthy → running elsewhere p50 %.1f s, max %.1f s",
		repairs.PodsDisplaced, repairs.RecoverySeconds.P50, repairs.RecoverySeconds.Max)
}

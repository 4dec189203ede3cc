// Package e2e runs bundled scenarios end to end with stratos-sim: a real control plane
// (etcd, kube-apiserver, kube-scheduler, kube-controller-manager), the fake cloud with
// its kubelet simulator, and the stratos binary as a separate process, at a time scale
// that fits CI.
package e2e

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stratos-sh/stratos/internal/sim/controlplane"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/test/harness"
)

// wantOK fails the test unless the run's report says ok and no invariant broke.
func wantOK(t *testing.T, rep *report.Report) {
	t.Helper()
	if !rep.OK {
		t.Errorf("ok is false: %v", rep.Failures)
	}
	if rep.Invariants != (report.Invariants{}) {
		t.Errorf("invariants broken: %+v", rep.Invariants)
	}
}

// simulate runs a scenario with the stratos-sim binary and returns its report; it fails
// the test when the run does not exit 0.
func simulate(t *testing.T, scenario string, args ...string) *report.Report {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := harness.EnsureTools(controlplane.Tools...)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := built()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jsonPath, plotPath := filepath.Join(dir, "report.json"), filepath.Join(dir, "plot.svg")
	path := scenario
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, "test", "scenarios", scenario)
	}
	cmd := exec.Command(sim, append([]string{"run", path,
		"--json", jsonPath, "--plot", plotPath,
		"--tools-dir", tools, "--crds", filepath.Join(root, "config", "crd", "bases"),
		"--work-dir", filepath.Join(dir, "work")}, args...)...)
	out, err := cmd.CombinedOutput()
	t.Logf("stratos-sim output:\n%s", out)
	if err != nil {
		for _, log := range []string{"stratos.log", "sim.log", "capi-manager.log"} {
			if data, readErr := os.ReadFile(filepath.Join(dir, "work", log)); readErr == nil {
				t.Logf("%s (last 4 KiB):\n%s", log, tail(data, 4096))
			}
		}
		t.Fatalf("stratos-sim run %s: %v", scenario, err)
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	rep := &report.Report{}
	if err := json.Unmarshal(data, rep); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, plotPath)
	return rep
}

// builtDistEnv names a directory holding stratos and stratos-sim built from this tree,
// which the tests then run instead of building their own: make test sets it to dist/,
// which its make build has written moments before with the same hack/build.sh.
const builtDistEnv = "STRATOS_E2E_DIST"

// built builds stratos and stratos-sim side by side with hack/build.sh, as make build
// does (so the build reuses what make build compiled), once for the package's tests, and
// returns stratos-sim's path: linking the two binaries costs seconds of both cores, once
// per test before. Under builtDistEnv it builds nothing.
var built = sync.OnceValues(func() (string, error) {
	if dir := os.Getenv(builtDistEnv); dir != "" {
		for _, name := range []string{"stratos", "stratos-sim"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				return "", fmt.Errorf("%s=%s: %w", builtDistEnv, dir, err)
			}
		}
		return filepath.Join(dir, "stratos-sim"), nil
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(root, "hack", "build.sh"), "stratos", "stratos-sim")
	cmd.Env = append(os.Environ(), "DIST="+distDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("hack/build.sh: %w\n%s", err, out)
	}
	return filepath.Join(distDir, "stratos-sim"), nil
})

func checkSVG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	decoder := xml.NewDecoder(f)
	for {
		if _, err := decoder.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("the plot is not well-formed XML: %v", err)
			}
			return
		}
	}
}

func tail(data []byte, n int) []byte {
	if len(data) > n {
		return data[len(data)-n:]
	}
	return data
}

// checkClean asserts what every scenario must end with: ok, every pod running, nothing
// leaked, duplicated or orphaned.
func checkClean(t *testing.T, rep *report.Report, pods int) {
	t.Helper()
	wantOK(t, rep)
	if rep.Pods.Created != pods || rep.Pods.Running != pods {
		t.Errorf("pods created %d, running %d; want %d and %d", rep.Pods.Created, rep.Pods.Running, pods, pods)
	}
	if rep.Operator.PeakRSSBytes <= 0 {
		t.Errorf("the operator's peak RSS was not measured")
	}
	if rep.Pods.LatencySeconds.P50 <= 0 || rep.Pods.LatencySeconds.Max < rep.Pods.LatencySeconds.P99 {
		t.Errorf("implausible pod latencies: %+v", rep.Pods.LatencySeconds)
	}
	if rep.APIWrites["create nodeclaims"] == 0 || rep.APIWrites["patch nodeclaims/status"] == 0 {
		t.Errorf("the audit log shows no claim writes by Stratos: %v", rep.APIWrites)
	}
}

// TestQuickstart runs the demo's scenario five times faster than real time: fast enough
// for CI, and slow enough that the waits' timeouts (divided by the scale) leave room on
// a loaded machine.
func TestQuickstart(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "quickstart.yaml", "--time-scale=5")
	checkClean(t, rep, 40)
	if rep.Nodes.StartedFromStandby < 5 {
		t.Errorf("started from standby: %d, want at least the pool's 5", rep.Nodes.StartedFromStandby)
	}
	if rep.CloudCalls["Start"] == 0 || rep.CloudCalls["Create"] < 5 {
		t.Errorf("cloud calls %v: want starts and at least the 5 warm launches", rep.CloudCalls)
	}
	if rep.Provisioning.StartCallLatencySeconds.Max <= 0 {
		t.Errorf("the start-call latency was not measured: %+v", rep.Provisioning.StartCallLatencySeconds)
	}
	if len(rep.Timeline) == 0 || len(rep.Steps) != 8 {
		t.Errorf("timeline of %d samples and %d steps, want samples and 8 steps", len(rep.Timeline), len(rep.Steps))
	}
	checkServedFromStandbyFaster(t, rep)
	t.Logf("quickstart at 5x: pods p50 %.1fs p99 %.1fs (scenario time), start call p99 %.0f ms, peak RSS %.1f MiB, wall %.0fs",
		rep.Pods.LatencySeconds.P50, rep.Pods.LatencySeconds.P99, rep.Provisioning.StartCallLatencySeconds.P99*1000,
		float64(rep.Operator.PeakRSSBytes)/(1<<20), rep.WallSeconds)
}

// checkServedFromStandbyFaster asserts the product's claim on a run with both paths: the
// burst's pods were served both from standby (the pool's nodes) and by cold launches
// (what the pool could not hold), every running pod has a path, and the median pod
// served from standby ran sooner than the median pod served cold.
func checkServedFromStandbyFaster(t *testing.T, rep *report.Report) {
	t.Helper()
	byPath := rep.Pods.ByPath
	if byPath.Standby.Count+byPath.Cold.Count+byPath.Existing.Count != rep.Pods.Running {
		t.Errorf("pods by path %d standby, %d cold, %d existing; want them to add up to the %d running",
			byPath.Standby.Count, byPath.Cold.Count, byPath.Existing.Count, rep.Pods.Running)
	}
	for path, served := range map[report.Path]report.ServedPods{report.PathStandby: byPath.Standby, report.PathCold: byPath.Cold} {
		if served.Count == 0 || served.LatencySeconds.P50 <= 0 || served.LatencySeconds.Max < served.LatencySeconds.P90 ||
			served.LatencySeconds.Max > rep.Pods.LatencySeconds.Max {
			t.Errorf("pods served %s: %+v, want some, with latencies within all pods' (max %.1fs)", path, served, rep.Pods.LatencySeconds.Max)
		}
	}
	if byPath.Standby.LatencySeconds.P50 >= byPath.Cold.LatencySeconds.P50 {
		t.Errorf("pods served from standby: p50 %.1fs, not under the cold launches' p50 %.1fs",
			byPath.Standby.LatencySeconds.P50, byPath.Cold.LatencySeconds.P50)
	}
	t.Logf("served from standby: p50 %.1fs p90 %.1fs (%d pods); cold: p50 %.1fs p90 %.1fs (%d pods); existing: %d pods",
		byPath.Standby.LatencySeconds.P50, byPath.Standby.LatencySeconds.P90, byPath.Standby.Count,
		byPath.Cold.LatencySeconds.P50, byPath.Cold.LatencySeconds.P90, byPath.Cold.Count, byPath.Existing.Count)
}

// TestLimits runs limits.yaml at five times real time: the pool's limit of 4 nodes holds
// through a second burst, and the pods left over are told why. Its expectations are
// counts, not latencies, so the scale does not change them.
func TestLimits(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "limits.yaml", "--time-scale=5")
	wantOK(t, rep)
	if rep.Pods.Created != 42 || rep.Pods.Running != 28 {
		t.Errorf("pods created %d, running %d; want 42 and the 28 the limit leaves room for", rep.Pods.Created, rep.Pods.Running)
	}
	if rep.Nodes.LaunchedCold != 4 || rep.Nodes.Peak != 4 {
		t.Errorf("launched cold %d, peak %d nodes; want the limit of 4", rep.Nodes.LaunchedCold, rep.Nodes.Peak)
	}
}

// TestZonalVolume runs zonal-volume.yaml at five times real time: with real
// kube-scheduler deciding, a pod whose volume is in fake-1a runs on a node launched there
// although a node in fake-1b had room, and a pod whose claim cannot bind launches
// nothing.
func TestZonalVolume(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "zonal-volume.yaml", "--time-scale=5")
	wantOK(t, rep)
	if rep.Pods.Created != 3 || rep.Pods.Running != 2 || rep.Nodes.LaunchedCold != 2 {
		t.Errorf("pods created %d, running %d, nodes launched %d; want 3, the 2 whose volumes allow, and 2 nodes (one per zone)",
			rep.Pods.Created, rep.Pods.Running, rep.Nodes.LaunchedCold)
	}
}

// TestPDBGuard runs pdb-guard.yaml at five times real time: with the real
// kube-controller-manager keeping the PodDisruptionBudget's status, consolidation and
// drift leave the node of a single-replica service under minAvailable: 1 alone, and
// consolidation gives back the other node instead.
func TestPDBGuard(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "pdb-guard.yaml", "--time-scale=5")
	wantOK(t, rep)
}

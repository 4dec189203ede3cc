package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratos-sh/stratos/test/harness"
)

// TestWarmupFailure runs warmup-failure.yaml at five times real time. The operator's
// timeouts and its backoff run in real time whatever the scale, so the run shortens
// them five times as well, to keep the file's proportions: a warmup timeout of 24s for
// 2m and --warmup-failure-backoff=6s for 30s. In the ten scenario minutes (two wall
// minutes) the pool launches its first wave of three and then one probe at a time, at
// most six claims (the operator of before the backoff launched 15 in the same ten
// minutes at time scale 1), is Degraded for WarmupFailing, and the 14-pod burst that
// follows runs in full, none of it held back for the warm pool. On main before the
// change, the pool launched 17 claims in those ten minutes and was never Degraded for
// it: the scenario failed at its expectation of WarmupFailing.
func TestWarmupFailure(t *testing.T) {
	runInTurn(t)
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "test", "scenarios", "warmup-failure.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	scaled := string(data)
	for old, new := range map[string]string{
		"          timeout: 2m\n": "          timeout: 24s\n",
		"\nobjects:\n":            "\noperatorArgs: [--warmup-failure-backoff=6s]\nobjects:\n",
	} {
		if !strings.Contains(scaled, old) {
			t.Fatalf("warmup-failure.yaml no longer holds %q: update the test's scaling", old)
		}
		scaled = strings.Replace(scaled, old, new, 1)
	}
	scenario := filepath.Join(t.TempDir(), "warmup-failure.yaml")
	if err := os.WriteFile(scenario, []byte(scaled), 0o644); err != nil {
		t.Fatal(err)
	}

	rep := simulate(t, scenario, "--time-scale=5")
	wantOK(t, rep)
	launches := 0
	for _, step := range rep.Steps[:2] {
		launches += step.CloudCalls["Create"]
	}
	if launches < 3 || launches > 6 {
		t.Errorf("%d launches in the ten minutes of failing warm-ups; want the first wave of 3 and at most 3 probes", launches)
	}
	if rep.Pods.Running != 14 || rep.Pods.ByPath.Standby.Count != 0 || rep.Pods.ByPath.Cold.Count == 0 {
		t.Errorf("pods running %d, by path %+v; want all 14, some cold and none from standby", rep.Pods.Running, rep.Pods.ByPath)
	}
}

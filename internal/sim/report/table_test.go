package report

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"burst-<100>&co: FAILED", "wait for 100 pods Running timed out",
		"✓", "✗", "create standby pool", "12.5s", "timed out after 2m",
		"cloud calls: Create=2",   // the step's
		"claims: 2 launched cold", // the step's claims
		"claims: 1 started from standby, 2 taken while warming",
		"6 / 5",                          // pods created / running
		"1.00s / 7.25s / 7.25s / 7.25s",  // nearest rank of 6 values: ranks 3, 6, 6, 6
		"0.05s / 0.10s / 0.20s / 0.30s",  // start-call latency
		"3 / 1 / 2 / 7",                  // nodes standby / warming / cold / peak
		"Create=2, Start=3, Terminate=1", // cloud calls sorted by operation
		"74 total",                       // API writes
		"patch NodeClaim=40, update Node=12, create Event=9",
		"+1 more",
		"1 / 0 / 0",     // invariants
		"2 / 150.0 MiB", // restarts / peak RSS
		"42.5s / 10x",   // wall time / time scale
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// A row per path, under the pods' latency.
	for _, want := range []string{
		`\n  from standby p50/p90/p99/max +0\.80s / 1\.20s / 1\.20s / 1\.20s \(4 pods\)\n`,
		`\n  from cold launches p50/p90/p99/max +2\.50s / 7\.25s / 7\.25s / 7\.25s \(2 pods\)\n`,
		`\n  on existing nodes p50/p90/p99/max +none\n`,
		// then a row per workload, by name
		`\n  of peak-1 p50/p90/p99/max +2\.50s / 7\.25s / 7\.25s / 7\.25s \(2 pods: 0 standby, 2 cold, 0 existing\)\n  of peak-2 p50/p90/p99/max +0\.80s / 1\.20s / 1\.20s / 1\.20s \(4 pods: 2 standby, 0 cold, 1 existing\)\n`,
		// and a row per pool's standby cost, by name
		`\nStandby node-hours of pool fixed +240\.50 \(at most 10 standby at once\)\nStandby node-hours of pool none +0\.00 \(at most 0 standby at once\)\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("table lacks a row matching %s:\n%s", want, out)
		}
	}
	// The table ends with the demo's two figures.
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	wantLast := []string{
		"Pods served from standby: p50 0.80 s, p90 1.20 s (4 pods)",
		"Pods served by cold launches: p50 2.50 s, p90 7.25 s (2 pods)",
	}
	if last := lines[len(lines)-2:]; last[0] != wantLast[0] || last[1] != wantLast[1] {
		t.Errorf("table ends with %q, want %q", last, wantLast)
	}
}

func TestWriteTableNoPodOnAPath(t *testing.T) {
	r := &Report{Scenario: "burst-warm", OK: true, Pods: Pods{ByPath: ByPath(map[Path][]float64{PathStandby: {12.5}})}}
	var buf bytes.Buffer
	if err := WriteTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "Pods served from standby: p50 12.5 s, p90 12.5 s (1 pod)\nPods served by cold launches: none\n") {
		t.Errorf("table should end saying no pod was served cold:\n%s", buf.String())
	}
}

func TestWriteTableAWS(t *testing.T) {
	r := &Report{
		Scenario: "burst", Cloud: "aws", OK: true,
		CloudCalls:          map[string]int{"ec2:CreateFleet": 5, "ec2:StartInstances": 2},
		CloudErrors:         map[string]int{"ec2:StartInstances IncorrectInstanceState": 1},
		SimulatorCloudCalls: map[string]int{"DescribeInstances": 40},
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"burst on aws: OK", "ec2:CreateFleet=5, ec2:StartInstances=2", "ec2:StartInstances IncorrectInstanceState=1", "DescribeInstances=40"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestWriteTableEmpty(t *testing.T) {
	for _, r := range []*Report{nil, {}, {OK: true}} {
		var buf bytes.Buffer
		if err := WriteTable(&buf, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "(unnamed scenario)") {
			t.Errorf("nameless report should say so:\n%s", buf.String())
		}
		if !strings.Contains(buf.String(), "Cloud calls") {
			t.Errorf("empty report table lacks rows:\n%s", buf.String())
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteTableWriteError(t *testing.T) {
	if err := WriteTable(failingWriter{}, sampleReport()); err == nil {
		t.Error("expected the writer's error to be returned")
	}
}

func TestTableShowsInterruptionsAndRepairs(t *testing.T) {
	r := &Report{Scenario: "spot", OK: true,
		Interruptions: &Interruptions{Instances: 3, PodsKilled: 1, Recovery: Recovery{PodsDisplaced: 12, PodsReplaced: 11,
			RecoverySeconds: Latency{P50: 8, P90: 12, P99: 14, Max: 14}, Replacements: ReplacementPaths{Standby: 10, Cold: 1}}},
		Repairs: &Repairs{Nodes: 1, Recovery: Recovery{PodsDisplaced: 4, PodsReplaced: 4}},
	}
	var out strings.Builder
	if err := WriteTable(&out, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Interruptions: instances / pods displaced / replaced / killed  3 / 12 / 11 / 1",
		"replacements from standby / cold / existing",
		"10 / 1 / 0",
		"Repairs: nodes / pods displaced / replaced",
		"1 / 4 / 4",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}

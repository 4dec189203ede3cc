package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratos-sh/stratos/internal/migrate"
)

const gettingStarted = "../testdata/getting-started.yaml"

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	configMap := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(configMap, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notYAML := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(notYAML, []byte("a: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		args       []string
		want       int
		wantStderr string
	}{
		{"converted, with report entries", []string{"-f", gettingStarted}, 0, "stratos.sh/capacity-type"},
		{"an unknown flag", []string{"--nope"}, 2, "flag provided but not defined"},
		{"a stray argument", []string{"-f", gettingStarted, "3"}, 2, "unexpected argument"},
		{"a bad report format", []string{"-f", gettingStarted, "--report-format", "xml"}, 2, "text or json"},
		{"a bad standby count", []string{"-f", gettingStarted, "--standby=-1"}, 2, "from 0 to 10000"},
		{"files and a kubeconfig", []string{"-f", gettingStarted, "--kubeconfig", "k"}, 2, "not both"},
		{"a missing file", []string{"-f", filepath.Join(dir, "missing.yaml")}, 1, "missing.yaml"},
		{"a file that is not YAML", []string{"-f", notYAML}, 1, "bad.yaml: document 1"},
		{"no Karpenter object", []string{"-f", configMap}, 1, "nothing to convert"},
		{"an unreadable kubeconfig", []string{"--kubeconfig", filepath.Join(dir, "missing")}, 1, "kubeconfig"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.wantStderr, stderr)
			}
		})
	}
}

func TestStdinAndFolderAndOutputDir(t *testing.T) {
	manifest, err := os.ReadFile(gettingStarted)
	if err != nil {
		t.Fatal(err)
	}
	code, fromStdin, _ := run(t, string(manifest), "-f", "-")
	if code != 0 {
		t.Fatalf("stdin: exit %d", code)
	}
	code, fromFile, _ := run(t, "", "-f", gettingStarted)
	if code != 0 || fromFile != fromStdin {
		t.Fatalf("a file and the same on stdin convert differently (exit %d)", code)
	}

	in := t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "all.yaml"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := run(t, "", "-f", in, "-o", out, "--standby")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	pool, err := os.ReadFile(filepath.Join(out, "nodepool-default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pool), "standby:\n    min: 1\n") {
		t.Errorf("--standby alone should propose %d standby node:\n%s", DefaultStandby, pool)
	}
	if _, err := os.Stat(filepath.Join(out, "ec2nodeclass-default.yaml")); err != nil {
		t.Error(err)
	}
}

func TestJSONReportToFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "report.json")
	code, _, stderr := run(t, "", "-f", "../testdata/unmappable.yaml", "--report", file, "--report-format", "json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var report migrate.Report
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, data)
	}
	found := false
	for _, e := range report.Entries {
		if e.Field == "spec.instanceStorePolicy" && e.Outcome == migrate.Unmapped && e.Object == "EC2NodeClass odd" {
			found = true
		}
	}
	if !found {
		t.Errorf("the JSON report lacks instanceStorePolicy: %s", data)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/test/harness"
)

// These tests run the built binary, as a user or a kubelet would: flags, probes,
// metrics, leader election between two replicas and SIGTERM.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stratos-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "stratos")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building stratos:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func TestHelpPrintsEveryFlagAndExitsZero(t *testing.T) {
	out, err := exec.Command(binary, "--help").Output()
	if err != nil {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"--cluster-name", "--cloud-provider", "--kubeconfig", "--kube-api-qps", "--kube-api-burst", "--leader-elect", "STRATOS_CLUSTER_NAME"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--help does not mention %s", want)
		}
	}
}

func TestBadFlagsExitTwoWithTheProblem(t *testing.T) {
	cmd := exec.Command(binary, "--cloud-provider=fake")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("want exit status 2, got %v", err)
	}
	if !strings.Contains(stderr.String(), "--cluster-name is required") {
		t.Fatalf("stderr does not name the problem:\n%s", stderr.String())
	}
}

func TestAWSProviderWithoutARegionSaysSo(t *testing.T) {
	env := harness.StartT(t)
	kubeconfig := writeKubeconfig(t, env)
	cmd := exec.Command(binary, "--cluster-name=test", "--cloud-provider=aws", "--kubeconfig", kubeconfig,
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
	// No region anywhere the SDK's default chain looks.
	cmd.Env = append(os.Environ(), "AWS_REGION=", "AWS_DEFAULT_REGION=", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PROFILE=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("want exit status 1, got %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "no AWS region") {
		t.Fatalf("the operator does not say why it stopped:\n%s", out)
	}
}

func TestTwoReplicasElectOneLeaderServeProbesAndHandOverOnSIGTERM(t *testing.T) {
	env := harness.StartT(t)
	kubeconfig := writeKubeconfig(t, env)

	first := startReplica(t, kubeconfig)
	first.waitHTTP(t, "/healthz", 200)
	first.waitHTTP(t, "/readyz", 200)
	first.waitMetric(t, `leader_election_master_status{name="stratos-leader-election"} 1`)
	first.waitMetric(t, "stratos_build_info{")
	holder := leaseHolder(t, env)
	if holder == "" {
		t.Fatal("the leader holds no Lease")
	}

	second := startReplica(t, kubeconfig)
	second.waitHTTP(t, "/readyz", 200)
	// The metrics server starts on its own; wait for it rather than race it.
	second.waitMetric(t, "stratos_build_info{")
	if strings.Contains(second.get(t, second.metrics, "/metrics"), `leader_election_master_status{name="stratos-leader-election"} 1`) {
		t.Fatal("the second replica leads while the first holds the Lease")
	}
	if got := leaseHolder(t, env); got != holder {
		t.Fatalf("the Lease moved to %q while its holder %q runs", got, holder)
	}

	first.stop(t)
	second.waitMetric(t, `leader_election_master_status{name="stratos-leader-election"} 1`)
	if got := leaseHolder(t, env); got == holder || got == "" {
		t.Fatalf("after the leader stopped the Lease is held by %q", got)
	}
	second.stop(t)
	assertJSONLogs(t, first.output())
}

func writeKubeconfig(t *testing.T, env *harness.Env) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.Kubeconfig(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// replica is one running stratos process.
type replica struct {
	cmd     *exec.Cmd
	health  string
	metrics string
	out     *syncBuffer
	exited  chan error
}

func startReplica(t *testing.T, kubeconfig string) *replica {
	t.Helper()
	r := &replica{health: freeAddress(t), metrics: freeAddress(t), out: &syncBuffer{}, exited: make(chan error, 1)}
	r.cmd = exec.Command(binary,
		"--kubeconfig", kubeconfig,
		"--cluster-name", "test",
		"--cloud-provider", "fake",
		"--leader-election-namespace", "default",
		"--leader-election-lease-duration", "15s",
		"--leader-election-renew-deadline", "10s",
		"--leader-election-retry-period", "500ms",
		"--health-probe-bind-address", r.health,
		"--metrics-bind-address", r.metrics,
	)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("replica output:\n%s", r.output())
		}
	})
	return r
}

// stop sends SIGTERM and expects a clean exit well within the shutdown timeout.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.exited:
		if err != nil {
			t.Fatalf("after SIGTERM the operator exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the operator did not exit within 30s of SIGTERM")
	}
}

func (r *replica) output() string { return r.out.String() }

func (r *replica) get(t *testing.T, address, path string) string {
	t.Helper()
	body, _, err := httpGet(address, path)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func (r *replica) waitHTTP(t *testing.T, path string, status int) {
	t.Helper()
	address := r.health
	eventually(t, fmt.Sprintf("%s answers %d", path, status), func() bool {
		_, code, err := httpGet(address, path)
		return err == nil && code == status
	})
}

func (r *replica) waitMetric(t *testing.T, line string) {
	t.Helper()
	eventually(t, "/metrics shows "+line, func() bool {
		body, _, err := httpGet(r.metrics, "/metrics")
		return err == nil && strings.Contains(body, line)
	})
}

func httpGet(address, path string) (string, int, error) {
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + address + path)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), resp.StatusCode, err
}

func leaseHolder(t *testing.T, env *harness.Env) string {
	t.Helper()
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: "default", Name: "stratos-leader-election"}
	if err := env.Client.Get(context.Background(), key, lease); err != nil {
		t.Fatalf("reading the leader-election Lease: %v", err)
	}
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// assertJSONLogs checks that the operator logs one JSON object a line.
func assertJSONLogs(t *testing.T, logs string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	for _, line := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Errorf("a log line is not JSON: %q", line)
			return
		}
		if _, ok := entry["msg"]; !ok {
			t.Errorf("a log line has no msg: %q", line)
		}
	}
}

// eventually polls cond every 50ms until it holds or 30s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer collects a process's output while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestMigrateSubcommand runs "stratos migrate" as a user does: Karpenter's
// getting-started objects in, Stratos objects on stdout, the report on stderr; a bad
// flag exits 2 (internal/migrate and its cli package test the rest).
func TestMigrateSubcommand(t *testing.T) {
	cmd := exec.Command(binary, "migrate", "-f", filepath.Join("..", "..", "internal", "migrate", "testdata", "getting-started.yaml"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("stratos migrate: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "kind: EC2NodeClass") || !strings.Contains(stdout.String(), "kind: NodePool") {
		t.Errorf("stdout has not the Stratos objects:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "karpenter.sh/capacity-type is stratos.sh/capacity-type") {
		t.Errorf("stderr has not the report:\n%s", stderr.String())
	}

	err := exec.Command(binary, "migrate", "--no-such-flag").Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("a bad flag: want exit status 2, got %v", err)
	}
}

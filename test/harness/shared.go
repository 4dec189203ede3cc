package harness

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A package whose TestMain runs through RunShared leases API servers from a pool instead
// of starting one per test, as Karpenter's suites share one environment per package:
// starting etcd and kube-apiserver costs about 5 s of two cores, more than many tests
// take. The pool holds one server per test running at once (go test -parallel), so tests
// that call t.Parallel still run side by side, each on a server of its own. Between two
// tests the server is swept back to what it held when it started (Sweep), and a test
// that finds anything left over fails, naming it, instead of running on a dirty cluster.
var shared struct {
	mu      sync.Mutex
	enabled bool
	// idle holds the servers no test uses, by the name of their preparation.
	idle map[string][]*sweptEnv
	all  []*sweptEnv
}

type sweptEnv struct {
	env  *Env
	base *baseline
}

// Prepared says how to start the servers of a pool: the harness's options, then prepare
// (installing CRDs, say), which runs once per server, before its baseline is taken.
type Prepared struct {
	// Name tells the pools apart; servers are leased only to tests that ask for the same.
	Name    string
	Options Options
	Prepare func(*Env) error
}

// RunShared runs a package's tests with the pool of shared API servers enabled, then
// stops them; a TestMain calls os.Exit(harness.RunShared(m)).
func RunShared(m *testing.M) int {
	shared.mu.Lock()
	shared.enabled, shared.idle = true, map[string][]*sweptEnv{}
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, s := range shared.all {
		if err := s.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping a shared API server: %v\n", err)
		}
	}
	shared.all, shared.idle, shared.enabled = nil, nil, false
	return code
}

// Lease returns an API server with the Stratos CRDs for the test: from the pool when the
// package runs through RunShared, swept clean when the test ends, else one of its own
// (StartT). The test must leave nothing running against it once its cleanups have run:
// its operators and kubelets stop in cleanups registered after Lease, so before the sweep.
func Lease(t testing.TB) *Env {
	t.Helper()
	return LeasePrepared(t, Prepared{Name: "stratos"})
}

// LeasePrepared is Lease for servers started and prepared as p says.
func LeasePrepared(t testing.TB, p Prepared) *Env {
	t.Helper()
	shared.mu.Lock()
	if !shared.enabled {
		shared.mu.Unlock()
		env := StartWithT(t, p.Options)
		if p.Prepare != nil {
			if err := p.Prepare(env); err != nil {
				t.Fatal(err)
			}
		}
		return env
	}
	var s *sweptEnv
	if idle := shared.idle[p.Name]; len(idle) > 0 {
		s, shared.idle[p.Name] = idle[len(idle)-1], idle[:len(idle)-1]
	}
	shared.mu.Unlock()
	if s == nil {
		env, err := StartWith(p.Options)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("shared API server started in %s", env.StartupTime)
		if p.Prepare != nil {
			if err := p.Prepare(env); err != nil {
				_ = env.Stop()
				t.Fatal(err)
			}
		}
		base, err := takeBaseline(env)
		if err != nil {
			_ = env.Stop()
			t.Fatal(err)
		}
		s = &sweptEnv{env: env, base: base}
		shared.mu.Lock()
		shared.all = append(shared.all, s)
		shared.mu.Unlock()
	}
	// Anything the previous test's sweep missed fails here, loudly, before this test runs;
	// but an Event may land after the sweep: an event recorder's sink writes on a
	// goroutine its owner's stop does not wait for. Those are swept and named in the log.
	if left, err := s.base.extras(); err != nil || len(left) > 0 {
		if err != nil || slices.ContainsFunc(left, func(key string) bool { return !strings.HasPrefix(key, "events") }) {
			retire(s)
			t.Fatalf("the shared API server is not clean at the start of the test: %v %v", left, err)
		}
		t.Logf("sweeping Events written after the previous test's sweep: %v", left)
		if err := s.base.sweep(); err != nil {
			retire(s)
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		started := time.Now()
		defer func() { t.Logf("swept the shared API server in %s", time.Since(started).Round(time.Millisecond)) }()
		if err := s.base.sweep(); err != nil {
			t.Errorf("sweeping the shared API server after the test: %v", err)
			retire(s)
			return
		}
		shared.mu.Lock()
		shared.idle[p.Name] = append(shared.idle[p.Name], s)
		shared.mu.Unlock()
	})
	return s.env
}

// retire stops a server that could not be swept, so that no later test runs on it.
func retire(s *sweptEnv) {
	shared.mu.Lock()
	for i, other := range shared.all {
		if other == s {
			shared.all = append(shared.all[:i], shared.all[i+1:]...)
			break
		}
	}
	shared.mu.Unlock()
	_ = s.env.Stop()
}

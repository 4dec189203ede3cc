package stack

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/scheme"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/harness"
)

// Disruption is a disruption controller of a test's own, against the harness's API
// server with its own cache and cluster state, whose passes the test makes one at a time
// on a clock it controls: decisions that depend on when a loop happens to run become
// deterministic. The fixture's operator runs beside it; tests keep that one idle (a long
// consolidateAfter on its real clock).
type Disruption struct {
	*disruption.Controller
	State *state.Cluster
}

// NewDisruption starts the controller's cache and waits until its cluster state has
// synced.
func NewDisruption(t testing.TB, env *harness.Env, cloud cloudprovider.API, clk clock.PassiveClock) *Disruption {
	t.Helper()
	d := newDisruption(t, env, env.Config, cloud, clk)
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return d.State.HasSynced(), nil
	}); err != nil {
		t.Fatal("the disruption controller's cluster state did not sync")
	}
	return d
}

// NewDisruptionHoldingPods is NewDisruption whose informers cannot list the pods until
// release is called, as a new leader's informers that have not listed everything yet:
// its cluster state shows the Nodes and claims, and no pod. It does not wait for the
// state to sync; reads right before a write go to the API server unhindered.
func NewDisruptionHoldingPods(t testing.TB, env *harness.Env, cloud cloudprovider.API, clk clock.PassiveClock) (d *Disruption, release func()) {
	t.Helper()
	held := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(held) }) }
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			// The informer lists or watches every pod; reads of one Node's pods select a field.
			if req.Method == http.MethodGet && req.URL.Path == "/api/v1/pods" && req.URL.Query().Get("fieldSelector") == "" {
				select {
				case <-held:
				case <-req.Context().Done():
					return nil, req.Context().Err()
				}
			}
			return rt.RoundTrip(req)
		})
	}
	d = newDisruption(t, env, cfg, cloud, clk)
	// Cleanups run last first: the list is let go before the manager stops, which waits
	// for its informers.
	t.Cleanup(release)
	apiReader, err := client.New(env.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	d.APIReader = apiReader
	return d, release
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// newDisruption starts a disruption controller's manager on cfg.
func newDisruption(t testing.TB, env *harness.Env, cfg *rest.Config, cloud cloudprovider.API, clk clock.PassiveClock) *Disruption {
	mgr, err := newManagerOn(t, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := indexes.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	cluster := state.New(clk, PrePullNamespace)
	if err := cluster.Watch(ctx, mgr.GetCache()); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
	c := &disruption.Controller{Client: mgr.GetClient(), Cloud: cloudprovider.New(cloud, cloudprovider.DefaultBatchOptions, nil), APIReader: mgr.GetAPIReader(),
		State: cluster, Recorder: mgr.GetEventRecorder("stratos-test-disruption"), Clock: clk}
	return &Disruption{Controller: c, State: cluster}
}

// WaitFor polls the controller's cluster state until cond holds, for up to a minute.
func (d *Disruption) WaitFor(t testing.TB, what string, cond func(state.Snapshot) bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return cond(d.State.Snapshot()), nil
	}); err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

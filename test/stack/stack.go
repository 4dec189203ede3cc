// Package stack runs Stratos in a test against the harness's API server: a fake cloud
// whose kubelets register Nodes, and the operator's controllers, which a test can stop
// and start again as a crash would.
package stack

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/controllers/interruption"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/operator"
	"github.com/stratos-sh/stratos/internal/podscope"
	"github.com/stratos-sh/stratos/internal/scheme"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/harness"
)

func init() {
	// Managers get their own test loggers; this silences the global one.
	log.SetLogger(logr.Discard())
}

// newManager returns a manager for tests: no metrics or probe servers, no leader
// election, and controller names that may repeat, as managers come and go in one process.
func newManager(t testing.TB, env *harness.Env, newClient client.NewClientFunc) (manager.Manager, error) {
	return newManagerOn(t, env.Config, newClient)
}

// newManagerOn is newManager on a configuration of the harness's API server.
func newManagerOn(t testing.TB, cfg *rest.Config, newClient client.NewClientFunc) (manager.Manager, error) {
	return ctrl.NewManager(cfg, manager.Options{
		Logger:                 TestLogger(t),
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		NewClient:              newClient,
	})
}

// runManager starts mgr until the test ends or the returned stop is called; stop waits
// for the manager to finish.
func runManager(t testing.TB, mgr manager.Manager) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// StartCloud runs a fake cloud's kubelets against the API server, as a cluster's
// machines would: they outlive the operators a test starts and stops.
func StartCloud(t testing.TB, env *harness.Env, opts fakecloud.Options) *fakecloud.Cloud {
	t.Helper()
	cloud := fakecloud.New(opts)
	mgr, err := newManager(t, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := kubelet.NewKubelet(cloud, env.Client, kubelet.KubeletOptions{}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
	return cloud
}

// Operator is Stratos's controllers running in the test process against the harness.
type Operator struct {
	Manager manager.Manager
	// Writes counts the API writes the controllers made.
	Writes *WriteCounter
	// Unavailable is the cloud provider's cache of unavailable offerings.
	Unavailable *cloudprovider.UnavailableOfferings
	// State is the cluster picture the controllers share: what provisioning nominated
	// where.
	State *state.Cluster
	stop  func()
}

// OperatorOptions tune an operator started by a test.
type OperatorOptions struct {
	NodeClaim    nodeclaim.Options
	Provisioning provisioning.Options
	Disruption   disruption.Options
	NodePool     nodepool.Options
	// Calendar, when set, is the clock pools' windows are read on.
	Calendar clock.PassiveClock
	// CloudBatch bounds the cloud calls' batching; zero means
	// cloudprovider.DefaultBatchOptions, with describes as old at TimeScale.
	CloudBatch cloudprovider.BatchOptions
	// Intercept, when set, wraps the controllers' client, for tests that inject failures.
	Intercept func(client.WithWatch) client.WithWatch
	// UnavailableOfferingTTL is how long a refused offering is avoided; zero means
	// cloudprovider.DefaultUnavailableOfferingTTL.
	UnavailableOfferingTTL time.Duration
	// PodScope, PodScopeInterval and ClusterAutoscalerStatus are the pod scope's options
	// (operator.ControllerOptions); an empty PodScope serves every pod.
	PodScope                podscope.Scope
	PodScopeInterval        time.Duration
	ClusterAutoscalerStatus types.NamespacedName
	// Notices, when set, is the notice queue the interruption controller reads instead
	// of the cloud's own (operator.NoticesOf); with neither it does not run.
	Notices cloudprovider.NoticeQueue
	// Interruption tunes the interruption controller.
	Interruption interruption.Options
	// WrapCloud, when set, wraps the cloud's API the controllers call, for tests that
	// change what the cloud answers (a provider ID known only after the launch, say).
	WrapCloud func(cloudprovider.API) cloudprovider.API
}

// StartOperator runs the operator's controllers against the API server and cloud, as
// cmd/stratos does; Stop ends them, as a crash would.
func StartOperator(t testing.TB, env *harness.Env, cloud cloudprovider.API, opts OperatorOptions) *Operator {
	t.Helper()
	writes := &WriteCounter{counts: map[string]int{}, byObject: map[string]map[string]int{}, last: map[string]time.Time{}, starts: map[string]map[string][]time.Time{}}
	mgr, err := newManager(t, env, func(cfg *rest.Config, options client.Options) (client.Client, error) {
		c, err := client.NewWithWatch(cfg, options)
		if err != nil {
			return nil, err
		}
		if opts.Intercept != nil {
			c = opts.Intercept(c)
		}
		return writes.wrap(c), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	unavailable := cloudprovider.NewUnavailableOfferings(opts.UnavailableOfferingTTL, nil)
	if opts.WrapCloud != nil {
		cloud = opts.WrapCloud(cloud)
	}
	notices := opts.Notices
	if notices == nil {
		notices = operator.NoticesOf(cloud)
	}
	controllers := operator.ControllerOptions{
		NodeClaim: opts.NodeClaim, Provisioning: opts.Provisioning, Disruption: opts.Disruption, NodePool: opts.NodePool, Calendar: opts.Calendar,
		PodScope: opts.PodScope, PodScopeInterval: opts.PodScopeInterval, ClusterAutoscalerStatus: opts.ClusterAutoscalerStatus,
		Notices: notices, Unavailable: unavailable, Interruption: opts.Interruption,
	}
	var cluster *state.Cluster
	controllers.ClusterState = func(c *state.Cluster) { cluster = c }
	batch := opts.CloudBatch
	if batch == (cloudprovider.BatchOptions{}) {
		batch = cloudprovider.DefaultBatchOptions
		// Describes are answered as old, and paced as far apart, as in a cluster, in the
		// fake cloud's time: a claim that follows a start made outside Stratos must see it
		// before the Node, which boots TimeScale times faster, reports Ready.
		batch.DescribeMaxAge /= TimeScale
		batch.DescribeInterval /= TimeScale
	}
	if err := operator.SetupControllers(context.Background(), mgr, cloudprovider.New(cloud, batch, unavailable), controllers); err != nil {
		t.Fatal(err)
	}
	return &Operator{Manager: mgr, Writes: writes, Unavailable: unavailable, State: cluster, stop: runManager(t, mgr)}
}

// Stop stops the operator and waits until it has.
func (o *Operator) Stop() { o.stop() }

// WriteCounter counts API writes by verb and kind, such as "patch Node" or
// "patch NodeClaim/status".
type WriteCounter struct {
	mu       sync.Mutex
	counts   map[string]int
	byObject map[string]map[string]int
	last     map[string]time.Time
	// starts holds when each write to an object began, by object name and verb and kind.
	starts map[string]map[string][]time.Time
}

// Starts lists when each write of a verb and kind (such as "update NodePool/status") to
// objects of that name began, in order.
func (w *WriteCounter) Starts(name, verbAndKind string) []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.starts[name][verbAndKind])
}

// Last is when the last write of a verb and kind (such as "create NodeClaim") ended.
func (w *WriteCounter) Last(verbAndKind string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last[verbAndKind]
}

// ForObject counts the writes to objects of that name (a claim or a Node), by verb and
// kind.
func (w *WriteCounter) ForObject(name string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.byObject[name])
}

// Counts returns a copy of the counts.
func (w *WriteCounter) Counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.counts)
}

// Total is the number of writes.
func (w *WriteCounter) Total() int {
	total := 0
	for _, n := range w.Counts() {
		total += n
	}
	return total
}

func (w *WriteCounter) add(verb string, obj client.Object, subresource string, c client.Client, started time.Time) {
	kind := fmt.Sprintf("%T", obj)
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		kind = gvk.Kind
	}
	if subresource != "" {
		kind += "/" + subresource
	}
	w.mu.Lock()
	w.counts[verb+" "+kind]++
	w.last[verb+" "+kind] = time.Now()
	if w.byObject[obj.GetName()] == nil {
		w.byObject[obj.GetName()] = map[string]int{}
	}
	w.byObject[obj.GetName()][verb+" "+kind]++
	if w.starts[obj.GetName()] == nil {
		w.starts[obj.GetName()] = map[string][]time.Time{}
	}
	w.starts[obj.GetName()][verb+" "+kind] = append(w.starts[obj.GetName()][verb+" "+kind], started)
	w.mu.Unlock()
}

func (w *WriteCounter) wrap(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			started := time.Now()
			err := c.Create(ctx, obj, opts...)
			w.add("create", obj, "", c, started)
			return err
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			started := time.Now()
			err := c.Update(ctx, obj, opts...)
			w.add("update", obj, "", c, started)
			return err
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			started := time.Now()
			err := c.Patch(ctx, obj, patch, opts...)
			w.add("patch", obj, "", c, started)
			return err
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			started := time.Now()
			err := c.Delete(ctx, obj, opts...)
			w.add("delete", obj, "", c, started)
			return err
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			started := time.Now()
			err := c.SubResource(sub).Create(ctx, obj, subObj, opts...)
			w.add("create", obj, sub, c, started)
			return err
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			started := time.Now()
			err := c.SubResource(sub).Update(ctx, obj, opts...)
			w.add("update", obj, sub, c, started)
			return err
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			started := time.Now()
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			w.add("patch", obj, sub, c, started)
			return err
		},
	})
}

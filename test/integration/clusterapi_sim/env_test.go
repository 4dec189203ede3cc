// Package clusterapisim_test runs the simulator's Cluster API providers (the
// sim.stratos.sh kinds) against a real kube-apiserver with CAPI's CRDs installed, over a
// fake cloud whose kubelet simulator registers the Nodes. Without CAPI's manager, the
// tests play its part themselves: they make the Machines and set what it would set.
package clusterapisim_test

import (
	"context"
	"fmt"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
	"path/filepath"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/stack"
)

// timeScale runs the fake cloud's physics forty times faster: a launch to a Ready Node
// takes about a second.
const timeScale = 40

// simEnv is an API server with CAPI's and the simulator's CRDs, and the simulator's
// providers and kubelets running over a fake cloud.
type simEnv struct {
	t     *testing.T
	ctx   context.Context
	env   *harness.Env
	c     client.Client
	cloud *fakecloud.Cloud
}

func newScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, simprovider.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// start leases an API server with CAPI's CRDs (from the capi-manager tool's config) and
// the simulator's (simapi.Install), one of the package's pool when its TestMain shares
// them, and runs the providers and kubelets.
func start(t *testing.T) *simEnv {
	t.Helper()
	return run(t, harness.LeasePrepared(t, harness.Prepared{Name: "capi-crds", Options: harness.Options{WithoutCRDs: true}, Prepare: installCRDs}))
}

// installCRDs installs CAPI's CRDs and the simulator's, so that the server's resources
// are known before the shared pool takes its baseline.
func installCRDs(env *harness.Env) error {
	bin, err := harness.EnsureTools("capi-manager")
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(bin, "capi-config", "crd")}, ErrorIfPathMissing: true,
	}); err != nil {
		return fmt.Errorf("installing CAPI's CRDs: %w", err)
	}
	if err := simapi.Install(env.Config); err != nil {
		return fmt.Errorf("installing the simulator's CRDs: %w", err)
	}
	return nil
}

// run installs the simulator's CRDs in env's API server, which serves CAPI's, and runs
// the providers and kubelets over a new fake cloud until the test ends.
func run(t *testing.T, env *harness.Env) *simEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := newScheme(t)
	c, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	if err := simapi.Install(env.Config); err != nil {
		t.Fatalf("installing the simulator's CRDs: %v", err)
	}
	cloud := fakecloud.New(fakecloud.Options{Clock: clock.RealClock{}, TimeScale: timeScale, Seed: 31})
	mgr := simtest.NewManager(t, env.Config, s, stack.TestLogger(t))
	if err := kubelet.NewKubelet(cloud, c, kubelet.KubeletOptions{}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := simprovider.Setup(mgr, cloud, simprovider.Options{TimeScale: timeScale}); err != nil {
		t.Fatal(err)
	}
	simtest.RunManager(t, mgr)
	return &simEnv{t: t, ctx: ctx, env: env, c: c, cloud: cloud}
}

// eventually polls cond every 50 ms until it holds, for up to a minute.
func (e *simEnv) eventually(what string, cond func() bool) {
	e.t.Helper()
	if err := wait.PollUntilContextTimeout(e.ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		e.t.Fatalf("timed out waiting until %s", what)
	}
}

func (e *simEnv) create(obj client.Object) {
	e.t.Helper()
	if err := e.c.Create(e.ctx, obj); err != nil {
		e.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// get reads obj afresh; false when it does not exist.
func (e *simEnv) get(obj client.Object) bool {
	e.t.Helper()
	err := e.c.Get(e.ctx, client.ObjectKeyFromObject(obj), obj)
	if client.IgnoreNotFound(err) != nil {
		e.t.Fatal(err)
	}
	return err == nil
}

// patch changes obj with a merge patch.
func patch[T client.Object](e *simEnv, obj T, change func(T)) {
	e.t.Helper()
	if !e.get(obj) {
		e.t.Fatalf("%s is gone", obj.GetName())
	}
	base := obj.DeepCopyObject().(T)
	change(obj)
	if err := e.c.Patch(e.ctx, obj, client.MergeFrom(base)); err != nil {
		e.t.Fatal(err)
	}
}

// eventReasons are the reasons of the Events about the named object.
func (e *simEnv) eventReasons(name string) []string {
	e.t.Helper()
	events := &eventsv1.EventList{}
	if err := e.c.List(e.ctx, events); err != nil {
		e.t.Fatal(err)
	}
	var reasons []string
	for _, ev := range events.Items {
		if ev.Regarding.Name == name {
			reasons = append(reasons, ev.Reason)
		}
	}
	return reasons
}

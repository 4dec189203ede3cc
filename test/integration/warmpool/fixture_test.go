// Package warmpool_test runs the warm-pool controllers against a real kube-apiserver,
// the fake cloud and its kubelet simulator, at a time scale that keeps the tests fast.
package warmpool_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/cloudprovider/fake"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/invariants"
	"github.com/stratos-sh/stratos/test/stack"
)

const (
	clusterName = "test"
	// timeScale runs the fake cloud 40 times faster than real time: a cold launch takes
	// about 1 s, a stop 0.5 s, a start 0.3 s.
	timeScale = 40
)

// fixture is one test's cluster: an API server, a fake cloud and the operator.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	env   *harness.Env
	cloud *fake.Cloud
	op    *stack.Operator
	opts  stack.OperatorOptions
}

func newFixture(t *testing.T, tune func(*nodeclaim.Options)) *fixture {
	// Each test has its own API server and cloud, so tests run side by side.
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := &fixture{t: t, ctx: ctx, env: harness.StartT(t)}
	f.cloud = stack.StartCloud(t, f.env, fake.Options{TimeScale: timeScale, Seed: 1})
	f.opts = stack.OperatorOptions{NodeClaim: nodeclaim.Options{
		ClusterName:         clusterName,
		LaunchTimeout:       30 * time.Second,
		RegistrationTimeout: 30 * time.Second,
		PollInterval:        100 * time.Millisecond,
		ResyncInterval:      time.Second,
		GCInterval:          500 * time.Millisecond,
		GCGracePeriod:       time.Second,
	}}
	if tune != nil {
		tune(&f.opts.NodeClaim)
	}
	f.op = stack.StartOperator(t, f.env, f.cloud, f.opts)
	f.create(&v1alpha1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	return f
}

// restartOperator stops the operator, as a crash would, and starts a new one.
func (f *fixture) restartOperator(opts stack.OperatorOptions) {
	f.op.Stop()
	f.op = stack.StartOperator(f.t, f.env, f.cloud, opts)
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := f.env.Client.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// pool creates a pool using the default class with standby.min set, tuned by tune.
func (f *fixture) pool(name string, min int32, tune func(*v1alpha1.NodePool)) *v1alpha1.NodePool {
	f.t.Helper()
	pool := &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodePoolSpec{
			Template: v1alpha1.NodeClaimTemplate{
				NodeClassRef: v1alpha1.NodeClassReference{Kind: "FakeNodeClass", Name: "default"},
				Labels:       map[string]v1alpha1.LabelValue{"example.com/team": "web"},
			},
			Standby: v1alpha1.Standby{Min: min, Warmup: v1alpha1.Warmup{Images: []string{"registry.example/app:1"}}},
		},
	}
	if tune != nil {
		tune(pool)
	}
	f.create(pool)
	return pool
}

// patch changes obj with change and writes it as a merge patch.
func patch[T client.Object](f *fixture, obj T, change func(T)) {
	f.t.Helper()
	if err := f.env.Client.Get(f.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		f.t.Fatal(err)
	}
	base := obj.DeepCopyObject().(T)
	change(obj)
	if err := f.env.Client.Patch(f.ctx, obj, client.MergeFrom(base)); err != nil {
		f.t.Fatalf("patching %s: %v", obj.GetName(), err)
	}
}

// claims returns the pool's claims.
func (f *fixture) claims(pool string) []v1alpha1.NodeClaim {
	f.t.Helper()
	list := &v1alpha1.NodeClaimList{}
	if err := f.env.Client.List(f.ctx, list); err != nil {
		f.t.Fatal(err)
	}
	var out []v1alpha1.NodeClaim
	for _, c := range list.Items {
		if c.Spec.NodePool == pool {
			out = append(out, c)
		}
	}
	return out
}

func (f *fixture) claim(name string) *v1alpha1.NodeClaim {
	f.t.Helper()
	claim := &v1alpha1.NodeClaim{}
	if err := f.env.Client.Get(f.ctx, client.ObjectKey{Name: name}, claim); err != nil {
		f.t.Fatal(err)
	}
	return claim
}

func (f *fixture) node(name string) *corev1.Node {
	f.t.Helper()
	node := &corev1.Node{}
	if err := f.env.Client.Get(f.ctx, client.ObjectKey{Name: name}, node); err != nil {
		f.t.Fatal(err)
	}
	return node
}

// instance returns what the cloud knows of an instance.
func (f *fixture) instance(id string) (cloudprovider.Instance, bool) {
	for _, i := range f.cloud.Instances() {
		if i.ID == id {
			return i, true
		}
	}
	return cloudprovider.Instance{}, false
}

// eventually polls cond every 50 ms until it holds, for up to a minute.
func (f *fixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	if err := wait.PollUntilContextTimeout(f.ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		f.t.Fatalf("timed out waiting until %s", what)
	}
}

// waitForPhase waits until the pool has exactly n claims, all in phase.
func (f *fixture) waitForPhase(pool string, n int, phase v1alpha1.NodeClaimPhase) []v1alpha1.NodeClaim {
	f.t.Helper()
	f.eventually(fmt.Sprintf("pool %s has %d claims in %s", pool, n, phase), func() bool {
		claims := f.claims(pool)
		if len(claims) != n {
			return false
		}
		for _, c := range claims {
			if c.Status.Phase != phase || !c.DeletionTimestamp.IsZero() {
				return false
			}
		}
		return true
	})
	return f.claims(pool)
}

// checkInvariants waits out garbage collection's grace and checks the invariants.
func (f *fixture) checkInvariants() {
	f.t.Helper()
	var last error
	f.eventually("the invariants hold", func() bool {
		_, last = invariants.Check(f.ctx, f.env.Client, f.cloud, clusterName)
		return last == nil
	})
	if last != nil {
		f.t.Fatal(last)
	}
}

func hasTaint(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func clientKey(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }

// eventReasons lists the reasons of the Events about an object, with repeats.
func (f *fixture) eventReasons(name string) []string {
	events := &eventsv1.EventList{}
	if err := f.env.Client.List(f.ctx, events); err != nil {
		f.t.Fatal(err)
	}
	var reasons []string
	for _, e := range events.Items {
		if e.Regarding.Name == name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

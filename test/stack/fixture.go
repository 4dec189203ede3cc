package stack

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

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/invariants"
	"github.com/stratos-sh/stratos/test/harness"
)

const (
	// ClusterName is the cluster name of the operators fixtures run.
	ClusterName = "test"
	// TimeScale runs the fake cloud 40 times faster than real time: a cold launch takes
	// about 1 s, a stop 0.5 s, a start 0.3 s.
	TimeScale = 40
	// PrePullNamespace is the namespace fixtures create for the operator's pre-pull pods,
	// as an installation gives the operator its own.
	PrePullNamespace = "stratos"
)

// Fixture is one test's cluster: an API server, a fake cloud at TimeScale and the
// operator, with the helpers integration tests share.
type Fixture struct {
	T     *testing.T
	Ctx   context.Context
	Env   *harness.Env
	Cloud *fakecloud.Cloud
	Op    *Operator
	Opts  OperatorOptions
}

// NewFixture starts a cluster for one test, run in parallel with the others, with a
// FakeNodeClass named default; tune adjusts the NodeClaim controllers' options.
func NewFixture(t *testing.T, tune func(*nodeclaim.Options)) *Fixture {
	// Each test has an API server of its own while it runs (harness.Lease: leased from
	// the package's pool when its TestMain shares them) and its own cloud, so tests run
	// side by side.
	t.Parallel()
	return NewSerialFixture(t, tune)
}

// NewSerialFixture is NewFixture for a test that must not share the CPU or the
// process's metrics with others: it measures.
func NewSerialFixture(t *testing.T, tune func(*nodeclaim.Options)) *Fixture {
	return NewSerialFixtureOn(t, fakecloud.Options{}, tune)
}

// NewSerialFixtureOn is NewSerialFixture on a fake cloud of those options (its time
// scale and seed are the fixture's).
func NewSerialFixtureOn(t *testing.T, cloud fakecloud.Options, tune func(*nodeclaim.Options)) *Fixture {
	return NewSerialFixtureWith(t, cloud, func(o *OperatorOptions) {
		if tune != nil {
			tune(&o.NodeClaim)
		}
	})
}

// NewSerialFixtureWith is NewSerialFixtureOn whose tune adjusts every option of the
// operator, before it starts.
func NewSerialFixtureWith(t *testing.T, cloud fakecloud.Options, tune func(*OperatorOptions)) *Fixture {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := &Fixture{T: t, Ctx: ctx, Env: harness.Lease(t)}
	cloud.TimeScale, cloud.Seed = TimeScale, 1
	if cloud.ClusterName == "" {
		cloud.ClusterName = ClusterName
	}
	f.Cloud = StartCloud(t, f.Env, cloud)
	f.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: PrePullNamespace}})
	f.Opts = OperatorOptions{NodeClaim: nodeclaim.Options{
		ClusterName:         ClusterName,
		PrePullNamespace:    PrePullNamespace,
		LaunchTimeout:       30 * time.Second,
		RegistrationTimeout: 30 * time.Second,
		PollInterval:        100 * time.Millisecond,
		// Failing launches retry as fast as the fixture polls, doubling to a second, so
		// that a test clearing a fault sees the launch within about a second.
		LaunchBackoffBase: 100 * time.Millisecond,
		LaunchBackoffMax:  time.Second,
		ResyncInterval:    time.Second,
		GCInterval:        500 * time.Millisecond,
		GCGracePeriod:     time.Second,
	}}
	if tune != nil {
		tune(&f.Opts)
	}
	f.Op = StartOperator(t, f.Env, f.Cloud, f.Opts)
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	return f
}

// RestartOperator stops the operator, as a crash would, and starts a new one.
func (f *Fixture) RestartOperator(opts OperatorOptions) {
	f.Op.Stop()
	f.Op = StartOperator(f.T, f.Env, f.Cloud, opts)
}

func (f *Fixture) Create(obj client.Object) {
	f.T.Helper()
	if err := f.Env.Client.Create(f.Ctx, obj); err != nil {
		f.T.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// Pool creates a pool using the default class with standby.min set, tuned by tune.
func (f *Fixture) Pool(name string, min int32, tune func(*v1beta1.NodePool)) *v1beta1.NodePool {
	f.T.Helper()
	pool := &v1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.NodePoolSpec{
			Template: v1beta1.NodeClaimTemplate{
				TemplateObjectMeta: v1beta1.TemplateObjectMeta{Labels: map[string]v1beta1.LabelValue{"example.com/team": "web"}},
				Spec:               v1beta1.NodeClaimTemplateSpec{NodeClassRef: v1beta1.NodeClassReference{Kind: "FakeNodeClass", Name: "default"}},
			},
			Standby: v1beta1.Standby{Min: min, Warmup: v1beta1.Warmup{Images: []string{"registry.example/app:1"}}},
		},
	}
	if tune != nil {
		tune(pool)
	}
	f.Create(pool)
	return pool
}

// Patch changes obj with change and writes it as a merge patch.
func Patch[T client.Object](f *Fixture, obj T, change func(T)) {
	f.T.Helper()
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		f.T.Fatal(err)
	}
	base := obj.DeepCopyObject().(T)
	change(obj)
	if err := f.Env.Client.Patch(f.Ctx, obj, client.MergeFrom(base)); err != nil {
		f.T.Fatalf("patching %s: %v", obj.GetName(), err)
	}
}

// Claims returns the pool's claims.
func (f *Fixture) Claims(pool string) []v1beta1.NodeClaim {
	f.T.Helper()
	list := &v1beta1.NodeClaimList{}
	if err := f.Env.Client.List(f.Ctx, list); err != nil {
		f.T.Fatal(err)
	}
	var out []v1beta1.NodeClaim
	for _, c := range list.Items {
		if c.Spec.NodePool == pool {
			out = append(out, c)
		}
	}
	return out
}

func (f *Fixture) Claim(name string) *v1beta1.NodeClaim {
	f.T.Helper()
	claim := &v1beta1.NodeClaim{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: name}, claim); err != nil {
		f.T.Fatal(err)
	}
	return claim
}

func (f *Fixture) Node(name string) *corev1.Node {
	f.T.Helper()
	node := &corev1.Node{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: name}, node); err != nil {
		f.T.Fatal(err)
	}
	return node
}

// Instance returns what the cloud knows of an instance.
func (f *Fixture) Instance(id string) (cloudprovider.Instance, bool) {
	for _, i := range f.Cloud.Instances() {
		if i.ID == id {
			return i, true
		}
	}
	return cloudprovider.Instance{}, false
}

// Eventually polls cond every 50 ms until it holds, for up to a minute.
func (f *Fixture) Eventually(what string, cond func() bool) {
	f.T.Helper()
	if err := wait.PollUntilContextTimeout(f.Ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		f.T.Fatalf("timed out waiting until %s", what)
	}
}

// WaitForPhase waits until the pool has exactly n claims, all in phase.
func (f *Fixture) WaitForPhase(pool string, n int, phase v1beta1.NodeClaimPhase) []v1beta1.NodeClaim {
	f.T.Helper()
	f.Eventually(fmt.Sprintf("pool %s has %d claims in %s", pool, n, phase), func() bool {
		claims := f.Claims(pool)
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
	return f.Claims(pool)
}

// CheckInvariants waits out garbage collection's grace and checks the invariants.
func (f *Fixture) CheckInvariants() {
	f.T.Helper()
	var last error
	f.Eventually("the invariants hold", func() bool {
		_, last = invariants.Check(f.Ctx, f.Env.Client, f.Cloud, ClusterName)
		return last == nil
	})
	if last != nil {
		f.T.Fatal(last)
	}
}

// SetDesired asks a claim for a state, as provisioning and disruption do.
func (f *Fixture) SetDesired(name string, desired v1beta1.DesiredState) {
	f.T.Helper()
	claim := f.Claim(name)
	Patch(f, claim, func(c *v1beta1.NodeClaim) { c.Spec.DesiredState = desired })
}

// waitForClaim waits until the claim is in phase.
func (f *Fixture) WaitForClaim(name string, phase v1beta1.NodeClaimPhase) *v1beta1.NodeClaim {
	f.T.Helper()
	f.Eventually("claim "+name+" is "+string(phase), func() bool { return f.Claim(name).Status.Phase == phase })
	return f.Claim(name)
}

// EventSeen reports whether the claim has an Event with reason.
func (f *Fixture) EventSeen(claim, reason string) bool {
	_, ok := f.EventNote(claim, reason)
	return ok
}

// WaitForEvent waits until the named object has an Event with reason. Events are
// recorded asynchronously, after the change they tell of: a check made once, just after
// the change, can come before its Event.
func (f *Fixture) WaitForEvent(name, reason string) {
	f.T.Helper()
	f.Eventually(name+" has a "+reason+" Event", func() bool { return f.EventSeen(name, reason) })
}

// EventNote returns the note of an Event about the named object with reason.
func (f *Fixture) EventNote(name, reason string) (string, bool) {
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events); err != nil {
		f.T.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			return e.Note, true
		}
	}
	return "", false
}

// EventReasons lists the reasons of the Events about an object, with repeats.
func (f *Fixture) EventReasons(name string) []string {
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events); err != nil {
		f.T.Fatal(err)
	}
	var reasons []string
	for _, e := range events.Items {
		if e.Regarding.Name == name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

// MarkUnschedulable writes the PodScheduled condition kube-scheduler writes when no node
// fits, as a status patch as kube-scheduler does: provisioning writes the pods it places
// too (their reservation tolerations), and an update of an older copy would conflict.
func (f *Fixture) MarkUnschedulable(pod *corev1.Pod) {
	f.T.Helper()
	base := pod.DeepCopy()
	pod.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/0 nodes are available", LastTransitionTime: metav1.Now(),
	}}
	if err := f.Env.Client.Status().Patch(f.Ctx, pod, client.MergeFrom(base)); err != nil {
		f.T.Fatal(err)
	}
}

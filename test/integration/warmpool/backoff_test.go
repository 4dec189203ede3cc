package warmpool_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/test/stack"
)

// typoImage is a warm-up image no node can pull: a mistyped tag.
const typoImage = "registry.example/app:1-typo"

// failingPool restarts the operator with opts.NodePool and makes a pool of min standby
// nodes whose warm-up image never pulls, with a short warmup timeout that terminates.
func (f *fixture) failingPool(name string, min int32, opts nodepool.Options) *v1beta1.NodePool {
	f.T.Helper()
	f.Opts.NodePool = opts
	f.RestartOperator(f.Opts)
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: name + "-typo"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{ImagePullErrors: []string{typoImage}}}})
	return f.Pool(name, min, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef.Name = name + "-typo"
		p.Spec.Standby.Warmup.Images = []string{typoImage}
		// The timeout may pass before the pull is tried on a busy machine: the failure
		// names the image not pulled either way.
		p.Spec.Standby.Warmup.Timeout = v1beta1.NewDuration(3 * time.Second)
		p.Spec.Standby.Warmup.TimeoutAction = v1beta1.WarmupTimeoutTerminate
	})
}

// degradedOf returns the pool's Degraded condition as the API server has it.
func (f *fixture) degradedOf(pool *v1beta1.NodePool) (*v1beta1.NodePool, *metav1.Condition) {
	f.T.Helper()
	got := &v1beta1.NodePool{}
	if err := f.Env.Client.Get(f.Ctx, clientKey(pool), got); err != nil {
		f.T.Fatal(err)
	}
	return got, meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionDegraded)
}

// standbyCreates counts the standby claims the running operator created.
func (f *fixture) standbyCreates(pool string) int {
	n := 0
	for _, c := range f.Claims(pool) {
		if c.Spec.DesiredState == v1beta1.DesiredStandby {
			n++
		}
	}
	return n
}

// A pool whose warm-up image never pulls does not launch, time out and launch again in
// every slot: once its first wave failed it is Degraded (WarmupFailing, naming the image,
// with an Event and the failures counted), creates no standby claim before its backoff
// ends, and keeps it so across a restart of the operator (the record is in its status).
// Pods pending meanwhile still get a cold launch of the pool. A change of the pool's spec
// ends the backoff at once. On main before the change, the pool created two fresh claims
// the moment the first two timed out, and was never Degraded for it: the test timed out
// waiting for WarmupFailing.
func TestAWarmupThatKeepsFailingBacksOff(t *testing.T) {
	f := newFixture(t, nil)
	// An hour's backoff: nothing in the test may end it but a spec change.
	pool := f.failingPool("typo", 2, nodepool.Options{WarmupBackoff: time.Hour, WarmupBackoffMax: 2 * time.Hour})
	counted := func() float64 {
		return stack.Counter(t, "stratos_nodepool_warmup_failures_total", map[string]string{"nodepool": "typo", "reason": nodeclaim.ReasonWarmupTimeout})
	}
	before := counted()

	var degraded *metav1.Condition
	f.Eventually("the pool is Degraded for its two failed warm-ups", func() bool {
		var got *v1beta1.NodePool
		got, degraded = f.degradedOf(pool)
		return degraded != nil && degraded.Reason == nodepool.ReasonWarmupFailing && got.Status.WarmupFailures.Count >= 2
	})
	if degraded.Status != metav1.ConditionTrue || !strings.Contains(degraded.Message, typoImage) {
		t.Errorf("Degraded = %+v; want True naming %s", degraded, typoImage)
	}
	f.Eventually("the failed claims are gone", func() bool { return len(f.Claims("typo")) == 0 })
	f.consistently("no standby claim is created while the pool backs off", time.Second, func() bool {
		return f.Op.Writes.Counts()["create NodeClaim"] == 2 && f.standbyCreates("typo") == 0
	})
	if got := counted() - before; got < 2 {
		t.Errorf("stratos_nodepool_warmup_failures_total rose by %v, want at least 2", got)
	}
	f.Eventually("a Warning Event says the pool is Degraded", func() bool { return f.EventSeen("typo", nodepool.ReasonWarmupFailing) })

	// The backoff lives in the pool's status: a new operator keeps it.
	f.RestartOperator(f.Opts)
	f.pendingPod("served-cold", "1")
	f.Eventually("a pending pod gets a cold launch of the backing-off pool", func() bool {
		claims := f.Claims("typo")
		return len(claims) == 1 && claims[0].Spec.DesiredState == v1beta1.DesiredRunning && claims[0].Status.Phase == v1beta1.PhaseRunning
	})
	f.consistently("the restarted operator creates no standby claim", time.Second, func() bool {
		return f.Op.Writes.Counts()["create NodeClaim"] == 1 && f.standbyCreates("typo") == 0
	})
	if _, still := f.degradedOf(pool); still.Reason != nodepool.ReasonWarmupFailing {
		t.Errorf("after the restart Degraded is %+v, want WarmupFailing still", still)
	}

	// The image fixed, the pool warms its standby nodes at once.
	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) {
		p.Spec.Standby.Warmup.Images = []string{"registry.example/app:1"}
		p.Spec.Standby.Warmup.Timeout = nil
	})
	f.Eventually("the fixed pool stands by and is no longer Degraded", func() bool {
		got, c := f.degradedOf(pool)
		return got.Status.Nodes.Standby == 2 && c.Status == metav1.ConditionFalse && got.Status.WarmupFailures == nil
	})
	f.CheckInvariants()
}

// Once its backoff ends, a pool whose warm-ups keep failing warms one node at a time,
// and each failure in a row doubles the wait: with a standby target of three, the
// second and third waves are one claim each, not three. On main before the change, the
// pool kept three claims warming at every moment and kept no record of the failures:
// the test timed out waiting for five.
func TestABackingOffPoolWarmsOneNodeAtATime(t *testing.T) {
	f := newFixture(t, nil)
	pool := f.failingPool("probe", 3, nodepool.Options{WarmupBackoff: 500 * time.Millisecond, WarmupBackoffMax: time.Hour})
	var creates int
	var failures int32
	f.Eventually("five claims failed: the first wave of three, then two probes", func() bool {
		// Read in this order, the creations cannot include a failure the count misses.
		creates = f.Op.Writes.Counts()["create NodeClaim"]
		if got, _ := f.degradedOf(pool); got.Status.WarmupFailures != nil {
			failures = got.Status.WarmupFailures.Count
		}
		return failures >= 5
	})
	if creates > int(failures)+1 {
		// Past the first wave, one probe at a time: every claim created but one (the
		// probe warming now) has failed, never another wave of three.
		t.Errorf("%d claims created for %d failures; want at most one more", creates, failures)
	}
	got, degraded := f.degradedOf(pool)
	rec := got.Status.WarmupFailures
	if wait := rec.RetryAfter.Sub(rec.LastFailureTime.Time); wait < 4*time.Second {
		t.Errorf("after %d failures the pool waits %s; want at least 500ms doubled four times", rec.Count, wait)
	}
	if degraded.Reason != nodepool.ReasonWarmupFailing {
		t.Errorf("Degraded = %+v, want WarmupFailing", degraded)
	}
}

// Instances whose kubelet never registers back the pool off as failed warm-ups do, the
// reason naming the step: RegistrationTimeout. On main before the change, the pool
// launched again at every registration timeout and was never Degraded for it: the test
// timed out.
func TestRegistrationsThatKeepFailingBackOff(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) { o.RegistrationTimeout = 2 * time.Second })
	f.Opts.NodePool = nodepool.Options{WarmupBackoff: time.Hour, WarmupBackoffMax: 2 * time.Hour}
	f.RestartOperator(f.Opts)
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "never-registers"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{NeverRegisterPercent: 100}}})
	pool := f.Pool("unregistered", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "never-registers" })

	var got *v1beta1.NodePool
	var degraded *metav1.Condition
	f.Eventually("the pool is Degraded for the failed registration", func() bool {
		got, degraded = f.degradedOf(pool)
		return degraded != nil && degraded.Reason == nodepool.ReasonWarmupFailing
	})
	if rec := got.Status.WarmupFailures; rec.Reason != nodeclaim.ReasonRegistrationTimeout || !strings.Contains(degraded.Message, "No Node registered") {
		t.Errorf("failures %+v, Degraded %q; want RegistrationTimeout, saying no Node registered", rec, degraded.Message)
	}
	f.Eventually("the failed claim is gone", func() bool { return len(f.Claims("unregistered")) == 0 })
	f.consistently("no claim is launched again while the pool backs off", time.Second, func() bool {
		return f.Op.Writes.Counts()["create NodeClaim"] == 1 && len(f.Claims("unregistered")) == 0
	})
}

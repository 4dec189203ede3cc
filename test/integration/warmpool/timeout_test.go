package warmpool_test

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/test/stack"
)

// slowPullClass is a node class whose image pulls take an hour: warmups never finish.
func (f *fixture) slowPullClass() {
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "slow-pull"},
		Spec: v1beta1.FakeNodeClassSpec{Physics: &v1beta1.FakePhysics{ImagePullDelay: v1beta1.NewDuration(time.Hour)}}})
}

func warmupTimingOut(action v1beta1.WarmupTimeoutAction) func(*v1beta1.NodePool) {
	return func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef.Name = "slow-pull"
		p.Spec.Standby.Warmup.Timeout = v1beta1.NewDuration(3 * time.Second)
		p.Spec.Standby.Warmup.TimeoutAction = action
	}
}

// With timeoutAction stop, a warmup that overruns stops the node as it is, once its
// pre-pull pod is gone, and says which images it lacked.
func TestWarmupTimeoutStopsTheNode(t *testing.T) {
	f := newFixture(t, nil)
	guard := f.guardStops()
	f.slowPullClass()
	pool := f.Pool("stop-anyway", 1, warmupTimingOut(v1beta1.WarmupTimeoutStop))

	claim := f.WaitForPhase("stop-anyway", 1, v1beta1.PhaseStandby)[0]
	warmed := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionWarmedUp)
	if warmed == nil || warmed.Status != metav1.ConditionFalse || warmed.Reason != nodeclaim.ReasonWarmupTimeout {
		t.Fatalf("WarmedUp = %+v, want False with reason WarmupTimeout", warmed)
	}
	if image := pool.Spec.Standby.Warmup.Images[0]; !strings.Contains(warmed.Message, image) {
		t.Errorf("WarmedUp says %q; want it to name the image not pulled, %s", warmed.Message, image)
	}
	f.assertStandby(&claim)
	guard.check(t, claim.Status.InstanceID)
	f.CheckInvariants()
}

// With timeoutAction terminate, a warmup that overruns terminates the node; the pool
// counts the failure and warms another once its backoff ends (shortened here).
func TestWarmupTimeoutTerminatesTheNode(t *testing.T) {
	f := newFixture(t, nil)
	f.Opts.NodePool = nodepool.Options{WarmupBackoff: 200 * time.Millisecond}
	f.RestartOperator(f.Opts)
	f.slowPullClass()
	f.Pool("replace", 1, warmupTimingOut(v1beta1.WarmupTimeoutTerminate))

	first := f.WaitForPhase("replace", 1, v1beta1.PhaseWarmingUp)[0]
	f.Eventually("the claim is removed for its warmup timeout", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: first.Name}, &v1beta1.NodeClaim{}))
	})
	if i, _ := f.Instance(first.Status.InstanceID); i.State != cloudprovider.StateShuttingDown && i.State != cloudprovider.StateTerminated {
		t.Fatalf("the timed-out instance is %s", i.State)
	}
	if !f.prePullGone(first.Name) {
		t.Error("the removed claim's pre-pull pod is still there")
	}
	f.Eventually("the pool warms a replacement", func() bool {
		for _, c := range f.Claims("replace") {
			if c.Name != first.Name {
				return true
			}
		}
		return false
	})
}

// An instance whose Node never registers is removed after the registration timeout.
func TestRegistrationTimeoutRemovesTheClaim(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) { o.RegistrationTimeout = 3 * time.Second })
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "mute"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{NeverRegisterPercent: 100}}})
	f.Pool("mute", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "mute" })

	first := f.WaitForPhase("mute", 1, v1beta1.PhaseRegistering)[0]
	f.Eventually("the claim is removed", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: first.Name}, &v1beta1.NodeClaim{}))
	})
	f.WaitForEvent(first.Name, nodeclaim.ReasonRegistrationTimeout)
	if i, _ := f.Instance(first.Status.InstanceID); i.State != cloudprovider.StateShuttingDown && i.State != cloudprovider.StateTerminated {
		t.Fatalf("the instance that never registered is %s", i.State)
	}
}

// A launch the cloud refuses is reported on the claim and the pool, and the claim is
// removed after the launch timeout.
func TestLaunchFailuresAreReportedThenTimeOut(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) { o.LaunchTimeout = 3 * time.Second })
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "no-quota"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{Errors: []v1beta1.FakeOperationFault{
			{Operation: v1beta1.FakeOperation(cloudprovider.OpCreate), Percent: 100, Error: v1beta1.FakeErrorKind(cloudprovider.CodeQuotaExceeded)}}}}})
	pool := f.Pool("no-quota", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "no-quota" })

	var first v1beta1.NodeClaim
	f.Eventually("the claim reports the refused launch", func() bool {
		claims := f.Claims("no-quota")
		if len(claims) != 1 {
			return false
		}
		launched := meta.FindStatusCondition(claims[0].Status.Conditions, v1beta1.ConditionLaunched)
		first = claims[0]
		return launched != nil && launched.Status == metav1.ConditionFalse && launched.Reason == string(cloudprovider.CodeQuotaExceeded)
	})
	f.WaitForEvent(first.Name, string(cloudprovider.CodeQuotaExceeded))
	f.Eventually("the pool reports the failing launches", func() bool {
		got := &v1beta1.NodePool{}
		_ = f.Env.Client.Get(f.Ctx, clientKey(pool), got)
		degraded := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionDegraded)
		return degraded != nil && degraded.Status == metav1.ConditionTrue && degraded.Reason == nodepool.ReasonLaunchFailed
	})
	f.Eventually("the claim is removed after the launch timeout", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: first.Name}, &v1beta1.NodeClaim{}))
	})
	f.WaitForEvent(first.Name, nodeclaim.ReasonLaunchTimeout)
	if n := len(f.Cloud.Instances()); n != 0 {
		t.Fatalf("refused launches left %d instances", n)
	}
}

// A standby claim whose launch fails for lack of capacity goes at once, without waiting
// for the launch timeout: no pod waits on it. The offerings that failed are marked
// unavailable, so the pool makes its replacement in a zone that has capacity; when no
// zone has any, the pool says its warm pool cannot be kept instead of retrying.
func TestAStandbyLaunchOutOfCapacityGoesAtOnceAndMovesZones(t *testing.T) {
	f := newFixture(t, nil) // the default launch timeout, 5 minutes, never runs out here
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "one-zone-full"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{InsufficientCapacity: []v1beta1.FakeOffering{{Zone: "fake-1a"}}}}})
	f.Pool("moving", 3, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "one-zone-full" })
	claims := f.WaitForPhase("moving", 3, v1beta1.PhaseStandby)
	for _, c := range claims {
		if c.Status.Zone == "fake-1a" {
			t.Fatalf("standby claim %s stands by in fake-1a, which has no capacity", c.Name)
		}
	}
	if n := stack.Counter(t, "stratos_nodeclaims_terminated_total", map[string]string{"nodepool": "moving", "reason": string(cloudprovider.CodeInsufficientCapacity)}); n < 1 {
		t.Fatalf("no standby claim was removed for lack of capacity (%v): the first one pinned to fake-1a should have been", n)
	}

	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "all-full"},
		Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"m5.large"}, Faults: &v1beta1.FakeFaults{InsufficientCapacity: []v1beta1.FakeOffering{{InstanceType: "m5.large"}}}}})
	pool := f.Pool("nowhere", 2, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "all-full" })
	f.Eventually("the pool says no offering can stand by", func() bool {
		got := &v1beta1.NodePool{}
		_ = f.Env.Client.Get(f.Ctx, clientKey(pool), got)
		degraded := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionDegraded)
		return degraded != nil && degraded.Reason == nodepool.ReasonNoStandbyOffering && len(f.Claims("nowhere")) == 0
	})
}

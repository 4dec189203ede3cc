package warmpool_test

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
)

// slowPullClass is a node class whose image pulls take an hour: warmups never finish.
func (f *fixture) slowPullClass() {
	f.create(&v1alpha1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "slow-pull"},
		Spec: v1alpha1.FakeNodeClassSpec{Physics: &v1alpha1.FakePhysics{ImagePullDelay: v1alpha1.NewDuration(time.Hour)}}})
}

func warmupTimingOut(action v1alpha1.WarmupTimeoutAction) func(*v1alpha1.NodePool) {
	return func(p *v1alpha1.NodePool) {
		p.Spec.Template.NodeClassRef.Name = "slow-pull"
		p.Spec.Standby.Warmup.Timeout = v1alpha1.NewDuration(3 * time.Second)
		p.Spec.Standby.Warmup.TimeoutAction = action
	}
}

// With timeoutAction stop, a warmup that overruns stops the node as it is.
func TestWarmupTimeoutStopsTheNode(t *testing.T) {
	f := newFixture(t, nil)
	f.slowPullClass()
	f.pool("stop-anyway", 1, warmupTimingOut(v1alpha1.WarmupTimeoutStop))

	claim := f.waitForPhase("stop-anyway", 1, v1alpha1.PhaseStandby)[0]
	warmed := meta.FindStatusCondition(claim.Status.Conditions, v1alpha1.ConditionWarmedUp)
	if warmed == nil || warmed.Status != metav1.ConditionFalse || warmed.Reason != nodeclaim.ReasonWarmupTimeout {
		t.Fatalf("WarmedUp = %+v, want False with reason WarmupTimeout", warmed)
	}
	f.assertStandby(&claim)
	f.checkInvariants()
}

// With timeoutAction terminate, a warmup that overruns terminates the node; the pool
// warms another.
func TestWarmupTimeoutTerminatesTheNode(t *testing.T) {
	f := newFixture(t, nil)
	f.slowPullClass()
	f.pool("replace", 1, warmupTimingOut(v1alpha1.WarmupTimeoutTerminate))

	var first v1alpha1.NodeClaim
	f.eventually("a claim is warming up", func() bool {
		claims := f.claims("replace")
		if len(claims) == 1 && claims[0].Status.Phase == v1alpha1.PhaseWarmingUp {
			first = claims[0]
			return true
		}
		return false
	})
	f.eventually("the claim is removed for its warmup timeout", func() bool {
		return apierrors.IsNotFound(f.env.Client.Get(f.ctx, client.ObjectKey{Name: first.Name}, &v1alpha1.NodeClaim{}))
	})
	if i, _ := f.instance(first.Status.InstanceID); i.State != cloudprovider.StateShuttingDown && i.State != cloudprovider.StateTerminated {
		t.Fatalf("the timed-out instance is %s", i.State)
	}
	f.eventually("the pool warms a replacement", func() bool {
		for _, c := range f.claims("replace") {
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
	f.create(&v1alpha1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "mute"},
		Spec: v1alpha1.FakeNodeClassSpec{Faults: &v1alpha1.FakeFaults{NeverRegisterPercent: 100}}})
	f.pool("mute", 1, func(p *v1alpha1.NodePool) { p.Spec.Template.NodeClassRef.Name = "mute" })

	var first v1alpha1.NodeClaim
	f.eventually("a claim waits for its Node", func() bool {
		claims := f.claims("mute")
		if len(claims) == 1 && claims[0].Status.Phase == v1alpha1.PhaseRegistering {
			first = claims[0]
			return true
		}
		return false
	})
	f.eventually("the claim is removed", func() bool {
		return apierrors.IsNotFound(f.env.Client.Get(f.ctx, client.ObjectKey{Name: first.Name}, &v1alpha1.NodeClaim{}))
	})
	if !f.eventSeen(first.Name, nodeclaim.ReasonRegistrationTimeout) {
		t.Error("no RegistrationTimeout Event on the claim")
	}
	if i, _ := f.instance(first.Status.InstanceID); i.State != cloudprovider.StateShuttingDown && i.State != cloudprovider.StateTerminated {
		t.Fatalf("the instance that never registered is %s", i.State)
	}
}

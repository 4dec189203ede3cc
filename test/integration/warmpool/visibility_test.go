package warmpool_test

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// launched waits until the pool's only claim has launched its instance and returns it.
func (f *fixture) launched(pool string) v1beta1.NodeClaim {
	f.T.Helper()
	var claim v1beta1.NodeClaim
	f.Eventually("the claim of pool "+pool+" launched", func() bool {
		claims := f.Claims(pool)
		if len(claims) != 1 || claims[0].Status.InstanceID == "" {
			return false
		}
		claim = claims[0]
		return true
	})
	return claim
}

// The cloud answers NotFound for a freshly launched instance, as EC2's eventually
// consistent API may: the claim is kept and asks again, and carries on once the cloud
// shows the instance.
func TestNotFoundRightAfterLaunchIsNotALoss(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) { o.InstanceVisibilityGrace = time.Minute })
	f.Cloud.SetFaults(fakecloud.Faults{Errors: map[string]fakecloud.ErrorFault{cloudprovider.OpGet: {Probability: 1, Code: cloudprovider.CodeNotFound}}})
	f.Pool("unseen", 1, nil)
	claim := f.launched("unseen")

	gets := f.Cloud.Calls()[cloudprovider.OpGet]
	f.Eventually("the claim asked the cloud about its instance several times", func() bool {
		return f.Cloud.Calls()[cloudprovider.OpGet] >= gets+5
	})
	kept := &v1beta1.NodeClaim{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: claim.Name}, kept); err != nil || !kept.DeletionTimestamp.IsZero() {
		t.Fatalf("the claim was removed for a NotFound right after its launch (err %v)", err)
	}

	f.Cloud.SetFaults(fakecloud.Faults{})
	standby := f.WaitForPhase("unseen", 1, v1beta1.PhaseStandby)[0]
	if standby.Name != claim.Name || standby.Status.InstanceID != claim.Status.InstanceID {
		t.Fatalf("claim %s with %s stands by; want %s with %s", standby.Name, standby.Status.InstanceID, claim.Name, claim.Status.InstanceID)
	}
	if f.EventSeen(claim.Name, nodeclaim.ReasonInstanceGone) {
		t.Error("the claim reported its instance gone")
	}
	f.CheckInvariants()
}

// An instance the cloud still does not know once the grace has passed is gone: its
// claim is removed, by the lifecycle controller or by garbage collection, not before.
func TestInstanceStillNotFoundAfterTheGraceIsGone(t *testing.T) {
	const grace = 4 * time.Second
	f := newFixture(t, func(o *nodeclaim.Options) { o.InstanceVisibilityGrace = grace })
	// A boot of 4 minutes, 6 s at the test's time scale, keeps the claim registering
	// beyond the grace.
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "slow-boot"},
		Spec: v1beta1.FakeNodeClassSpec{Physics: &v1beta1.FakePhysics{BootDelay: v1beta1.NewDuration(4 * time.Minute)}}})
	f.Pool("lost", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "slow-boot" })
	claim := f.launched("lost")
	if err := f.Cloud.Vanish(claim.Status.InstanceID); err != nil {
		t.Fatal(err)
	}

	goneAt := f.waitRemoved(claim.Name)
	if waited := goneAt.Sub(trueSince(t, &claim, v1beta1.ConditionLaunched)); waited < grace {
		t.Errorf("the claim was removed %s after its launch, within the %s grace", waited, grace)
	}
	f.WaitForEvent(claim.Name, nodeclaim.ReasonInstanceGone)
	f.Eventually("the pool launches a replacement", func() bool {
		claims := f.Claims("lost")
		return len(claims) == 1 && claims[0].Name != claim.Name
	})
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: claim.Name}, &v1beta1.NodeClaim{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the lost claim came back: %v", err)
	}
}

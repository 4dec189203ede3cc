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
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
)

// A claim whose instance the cloud ended right after accepting its launch (on EC2, an
// encrypted volume whose KMS key cannot be used) says why on its Launched condition and
// in a Warning Event, and keeps its place, so that its pool launches no other instance
// into the same failure, until its launch timeout; then it is removed with that reason.
//
// On main before the change (the instance ended with TerminateExternally, as the fake
// cloud had no EndAtLaunch), the claim was removed at once as InstanceGone and its pool
// launched again: this test failed waiting for "the claim says why its instance ended".
func TestAnInstanceEndedAtLaunchHoldsItsClaimUntilTheLaunchTimeout(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) { o.LaunchTimeout = 8 * time.Second })
	// The Node never registers, so that the claim waits in Registering as a node whose
	// instance does not boot would.
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "unbootable"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{NeverRegisterPercent: 100}}})
	f.Pool("unbootable", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "unbootable" })

	first := f.WaitForPhase("unbootable", 1, v1beta1.PhaseRegistering)[0]
	const why = "EC2 ended instance at launch (Client.InternalError: Client error on launch): an encrypted volume's KMS key cannot be used"
	if err := f.Cloud.EndAtLaunch(first.Status.InstanceID, why); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the claim says why its instance ended", func() bool {
		got := &v1beta1.NodeClaim{}
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: first.Name}, got); err != nil {
			return false
		}
		launched := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionLaunched)
		return launched != nil && launched.Status == metav1.ConditionFalse && launched.Reason == nodeclaim.ReasonEndedAtLaunch &&
			strings.Contains(launched.Message, why)
	})
	f.WaitForEvent(first.Name, nodeclaim.ReasonEndedAtLaunch)
	for _, i := range f.Cloud.Instances() {
		if i.ID != first.Status.InstanceID {
			t.Errorf("instance %s launched while the claim holds its failure; want no relaunch", i.ID)
		}
	}
	f.Eventually("the claim is removed after its launch timeout", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: first.Name}, &v1beta1.NodeClaim{}))
	})
	if removedAfter := time.Since(first.CreationTimestamp.Time); removedAfter < 8*time.Second-time.Second {
		// CreationTimestamp has a resolution of one second.
		t.Errorf("the claim went %s after its creation; want it held until the 8s launch timeout", removedAfter)
	}
}

package warmpool_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
)

// An instance tagged with the cluster but owned by no claim is terminated after the
// grace period; an instance of another cluster is left alone.
func TestGarbageCollectionTerminatesInstancesWithoutClaim(t *testing.T) {
	f := newFixture(t, nil)
	orphan, err := f.Cloud.Create(f.Ctx, &cloudprovider.CreateRequest{
		ClientToken: "lost-claim-uid",
		Tags:        map[string]string{v1beta1.TagCluster: clusterName, v1beta1.TagNodeClaim: "deleted-long-ago"},
	})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := f.Cloud.Create(f.Ctx, &cloudprovider.CreateRequest{
		ClientToken: "other-cluster",
		Tags:        map[string]string{v1beta1.TagCluster: "another-cluster", v1beta1.TagNodeClaim: "theirs"},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Eventually("the orphan is terminated", func() bool {
		i, _ := f.Instance(orphan.ID)
		return i.State == cloudprovider.StateShuttingDown || i.State == cloudprovider.StateTerminated
	})
	if i, _ := f.Instance(foreign.ID); i.State == cloudprovider.StateShuttingDown || i.State == cloudprovider.StateTerminated {
		t.Fatalf("another cluster's instance was terminated")
	}
	f.CheckInvariants()
}

// A claim whose instance vanished is removed, its Node with it, and the pool warms a
// replacement.
func TestClaimWhoseInstanceVanishedIsRemoved(t *testing.T) {
	// The standby node is older than this grace for a NotFound: its instance is gone.
	f := newFixture(t, func(o *nodeclaim.Options) { o.InstanceVisibilityGrace = time.Second })
	f.Pool("vanish", 1, nil)
	claim := f.WaitForPhase("vanish", 1, v1beta1.PhaseStandby)[0]
	if err := f.Cloud.Vanish(claim.Status.InstanceID); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the claim and its Node are gone", func() bool {
		err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: claim.Name}, &v1beta1.NodeClaim{})
		nodeErr := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: claim.Status.NodeName}, &corev1.Node{})
		return apierrors.IsNotFound(err) && apierrors.IsNotFound(nodeErr)
	})
	replacement := f.WaitForPhase("vanish", 1, v1beta1.PhaseStandby)[0]
	if replacement.Name == claim.Name {
		t.Fatal("the vanished claim came back")
	}
	f.CheckInvariants()
}

// Instances stopped, started or terminated outside Stratos: the claim follows the truth.
func TestClaimsFollowOutsideChanges(t *testing.T) {
	f := newFixture(t, nil)
	// A ceiling of 2 keeps the claim when it is stopped beside the pool's replacement.
	f.Pool("outside", 1, func(p *v1beta1.NodePool) { p.Spec.Standby.Max = ptr.To[int32](2) })
	claim := f.WaitForPhase("outside", 1, v1beta1.PhaseStandby)[0]

	if err := f.Cloud.StartExternally(claim.Status.InstanceID); err != nil {
		t.Fatal(err)
	}
	running := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
	f.assertRunning(running)
	if running.Spec.DesiredState != v1beta1.DesiredRunning {
		t.Errorf("after an outside start desiredState is %s, want Running", running.Spec.DesiredState)
	}

	if err := f.Cloud.StopExternally(claim.Status.InstanceID); err != nil {
		t.Fatal(err)
	}
	standby := f.WaitForClaim(claim.Name, v1beta1.PhaseStandby)
	f.assertStandby(standby)
	if standby.Spec.DesiredState != v1beta1.DesiredStandby {
		t.Errorf("after an outside stop desiredState is %s, want Standby", standby.Spec.DesiredState)
	}

	if err := f.Cloud.TerminateExternally(claim.Status.InstanceID); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the claim is removed", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: claim.Name}, &v1beta1.NodeClaim{}))
	})
	f.CheckInvariants()
}

// Deleting a pool terminates every instance and deletes every Node before the pool goes.
func TestDeletingThePoolRemovesEverything(t *testing.T) {
	f := newFixture(t, nil)
	pool := f.Pool("doomed", 3, nil)
	claims := f.WaitForPhase("doomed", 3, v1beta1.PhaseStandby)
	f.SetDesired(claims[0].Name, v1beta1.DesiredRunning)
	f.WaitForClaim(claims[0].Name, v1beta1.PhaseRunning)

	if err := f.Env.Client.Delete(f.Ctx, pool); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the pool is gone", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pool), &v1beta1.NodePool{}))
	})
	if n := len(f.Claims("doomed")); n != 0 {
		t.Fatalf("%d claims outlived their pool", n)
	}
	for _, i := range f.Cloud.Instances() {
		if i.State != cloudprovider.StateShuttingDown && i.State != cloudprovider.StateTerminated {
			t.Errorf("instance %s is %s after its pool was deleted", i.ID, i.State)
		}
	}
	for _, c := range claims {
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: c.Status.NodeName}, &corev1.Node{}); !apierrors.IsNotFound(err) {
			t.Errorf("Node %s outlived its pool: %v", c.Status.NodeName, err)
		}
	}
	f.CheckInvariants()
}

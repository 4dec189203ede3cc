package warmpool_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/test/stack"
)

// resyncRarely stops the periodic resync from waking claims within a test, so that only
// the pool watch can wake them when a pool is resumed.
func resyncRarely(o *nodeclaim.Options) { o.ResyncInterval = 10 * time.Minute }

// setPaused pauses or resumes a pool and waits until the pool controller has seen it,
// and so the controllers' shared cache.
func (f *fixture) setPaused(pool *v1beta1.NodePool, paused bool) {
	f.T.Helper()
	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) { p.Spec.Paused = paused })
	f.Eventually("the pool controller sees the pause", func() bool {
		got := &v1beta1.NodePool{}
		if err := f.Env.Client.Get(f.Ctx, clientKey(pool), got); err != nil || got.Status.ObservedGeneration != got.Generation {
			return false
		}
		degraded := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionDegraded)
		return (degraded != nil && degraded.Reason == nodepool.ReasonPaused) == paused
	})
}

// A paused pool's claim whose Node never registers is kept past the registration
// timeout, and removed once the pool is resumed.
func TestPausedPoolKeepsAClaimPastItsRegistrationTimeout(t *testing.T) {
	const timeout = 5 * time.Second
	f := newFixture(t, func(o *nodeclaim.Options) { resyncRarely(o); o.RegistrationTimeout = timeout })
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "mute"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{NeverRegisterPercent: 100}}})
	pool := f.Pool("paused-mute", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "mute" })
	claim := f.launched("paused-mute")
	f.setPaused(pool, true)
	if time.Since(trueSince(t, &claim, v1beta1.ConditionLaunched)) >= timeout {
		t.Fatal("the pool was paused after the registration timeout had passed: nothing to learn")
	}

	removed := func() bool {
		c := &v1beta1.NodeClaim{}
		return f.Env.Client.Get(f.Ctx, clientKey(&claim), c) != nil || !c.DeletionTimestamp.IsZero()
	}
	f.Eventually("the timeout is held or applied", func() bool { return f.EventSeen(claim.Name, nodeclaim.ReasonPoolPaused) || removed() })
	if removed() {
		t.Fatal("the registration timeout removed a paused pool's claim")
	}
	if c := f.Claim(claim.Name); c.Status.Phase != v1beta1.PhaseRegistering {
		t.Fatalf("the paused pool's claim is %s, want Registering", c.Status.Phase)
	}

	f.setPaused(pool, false)
	f.waitRemoved(claim.Name)
	f.WaitForEvent(claim.Name, nodeclaim.ReasonRegistrationTimeout)
}

// A paused pool's standby node asked to run is not started; it starts once the pool is
// resumed.
func TestPausedPoolDoesNotStartAStandbyClaim(t *testing.T) {
	f := newFixture(t, resyncRarely)
	pool := f.Pool("paused-start", 1, func(p *v1beta1.NodePool) { p.Spec.Standby.Max = ptr.To[int32](2) })
	claim := f.WaitForPhase("paused-start", 1, v1beta1.PhaseStandby)[0]
	f.setPaused(pool, true)
	starts := f.Cloud.Calls()[cloudprovider.OpStart]
	f.SetDesired(claim.Name, v1beta1.DesiredRunning)

	f.Eventually("the start is held or made", func() bool {
		return f.EventSeen(claim.Name, nodeclaim.ReasonPoolPaused) || f.Cloud.Calls()[cloudprovider.OpStart] != starts
	})
	held := f.Claim(claim.Name)
	instance, _ := f.Instance(claim.Status.InstanceID)
	if held.Status.Phase != v1beta1.PhaseStandby || instance.State != cloudprovider.StateStopped || f.Cloud.Calls()[cloudprovider.OpStart] != starts {
		t.Fatalf("while paused the claim is %s, its instance %s, after %d start calls", held.Status.Phase, instance.State, f.Cloud.Calls()[cloudprovider.OpStart]-starts)
	}

	f.setPaused(pool, false)
	f.assertRunning(f.WaitForClaim(claim.Name, v1beta1.PhaseRunning))
	f.CheckInvariants()
}

// A paused pool's warming node that has pulled its images is not stopped; it stops once
// the pool is resumed.
func TestPausedPoolDoesNotStopAWarmedClaim(t *testing.T) {
	f := newFixture(t, resyncRarely)
	// Pulls of 4 minutes, 6 s at the test's time scale, leave time to pause the pool.
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "slowish-pull"},
		Spec: v1beta1.FakeNodeClassSpec{Physics: &v1beta1.FakePhysics{ImagePullDelay: v1beta1.NewDuration(4 * time.Minute)}}})
	pool := f.Pool("paused-warm", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "slowish-pull" })
	claim := f.WaitForPhase("paused-warm", 1, v1beta1.PhaseWarmingUp)[0]
	f.setPaused(pool, true)
	stops := f.Cloud.Calls()[cloudprovider.OpStop]

	f.Eventually("the node pulls its images", func() bool {
		return slices.ContainsFunc(f.Node(claim.Status.NodeName).Status.Images, func(i corev1.ContainerImage) bool {
			return slices.Contains(i.Names, pool.Spec.Standby.Warmup.Images[0])
		})
	})
	f.Eventually("the stop is held or made", func() bool {
		return f.EventSeen(claim.Name, nodeclaim.ReasonPoolPaused) || f.Cloud.Calls()[cloudprovider.OpStop] != stops
	})
	held := f.Claim(claim.Name)
	instance, _ := f.Instance(claim.Status.InstanceID)
	if held.Status.Phase != v1beta1.PhaseWarmingUp || instance.State != cloudprovider.StateRunning || f.Cloud.Calls()[cloudprovider.OpStop] != stops {
		t.Fatalf("while paused the warmed claim is %s, its instance %s, after %d stop calls", held.Status.Phase, instance.State, f.Cloud.Calls()[cloudprovider.OpStop]-stops)
	}

	f.setPaused(pool, false)
	f.assertStandby(f.WaitForClaim(claim.Name, v1beta1.PhaseStandby))
	f.CheckInvariants()
}

// While a pool is paused, garbage collection still terminates a leaked instance of the
// pool, a claim whose instance was terminated outside is still removed, and a claim a
// user deletes is terminated; the pool replaces none of them.
func TestWhatAPausedPoolStillDoes(t *testing.T) {
	f := newFixture(t, nil)
	pool := f.Pool("paused-still", 2, nil)
	claims := f.WaitForPhase("paused-still", 2, v1beta1.PhaseStandby)
	f.setPaused(pool, true)

	orphan, err := f.Cloud.Create(f.Ctx, &cloudprovider.CreateRequest{
		ClientToken: "leaked",
		Tags:        map[string]string{v1beta1.TagCluster: clusterName, v1beta1.TagNodePool: pool.Name, v1beta1.TagNodeClaim: "deleted-long-ago"},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Eventually("garbage collection terminates the leak", func() bool {
		i, _ := f.Instance(orphan.ID)
		return i.State == cloudprovider.StateShuttingDown || i.State == cloudprovider.StateTerminated
	})

	if err := f.Cloud.TerminateExternally(claims[0].Status.InstanceID); err != nil {
		t.Fatal(err)
	}
	f.waitRemoved(claims[0].Name)
	f.WaitForEvent(claims[0].Name, nodeclaim.ReasonInstanceGone)

	if err := f.Env.Client.Delete(f.Ctx, &claims[1]); err != nil {
		t.Fatal(err)
	}
	f.waitRemoved(claims[1].Name)
	if i, _ := f.Instance(claims[1].Status.InstanceID); i.State != cloudprovider.StateShuttingDown && i.State != cloudprovider.StateTerminated {
		t.Errorf("the deleted claim's instance is %s", i.State)
	}
	if n := len(f.Claims("paused-still")); n != 0 {
		t.Errorf("the paused pool has %d claims; it must replace nothing", n)
	}
	f.CheckInvariants()
}

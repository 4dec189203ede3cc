package warmpool_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
)

// lostFor reports whether the claim says that its instance is lost, for reason.
func lostFor(claim *v1beta1.NodeClaim, reason string) bool {
	c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionInstanceLost)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason
}

// poolDegraded returns the pool's Degraded condition when it is True for reason.
func (f *fixture) poolDegraded(name, reason string) *metav1.Condition {
	pool := &v1beta1.NodePool{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: name}, pool); err != nil {
		f.T.Fatal(err)
	}
	if c := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason {
		return c
	}
	return nil
}

// afterGarbageCollection waits until garbage collection has made two full passes from
// now: it lists the cluster's instances once a pass, and a pass that begins after
// another began began after that one ended.
func (f *fixture) afterGarbageCollection() {
	f.T.Helper()
	from := f.Cloud.Calls()[cloudprovider.OpList]
	f.Eventually("garbage collection makes two passes", func() bool { return f.Cloud.Calls()[cloudprovider.OpList] >= from+2 })
}

// assertKept checks that the claims are there, not being deleted unless deleting says
// so, with their Nodes and their instances not terminated.
func (f *fixture) assertKept(deleting bool, claims ...*v1beta1.NodeClaim) {
	f.T.Helper()
	for _, c := range claims {
		now := &v1beta1.NodeClaim{}
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: c.Name}, now); err != nil || now.DeletionTimestamp.IsZero() == deleting {
			f.T.Fatalf("claim %s: %v, deletion %v", c.Name, err, now.DeletionTimestamp)
		}
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: c.Status.NodeName}, &corev1.Node{}); err != nil {
			f.T.Fatalf("Node %s of claim %s: %v", c.Status.NodeName, c.Name, err)
		}
		if i, _ := f.Instance(c.Status.InstanceID); i.State == cloudprovider.StateShuttingDown || i.State == cloudprovider.StateTerminated {
			f.T.Fatalf("instance %s of claim %s is %s", c.Status.InstanceID, c.Name, i.State)
		}
	}
}

// An instance whose cluster tag someone removed is not gone: its claim and Node stay,
// the instance runs on, and the claim says why, with its pool Degraded, until the tag is
// back. A claim deleted meanwhile waits too: Stratos does not terminate an instance
// that is not the cluster's, nor forget it. On main before the fix both claims were
// removed as InstanceGone and their Nodes deleted without a drain, while their
// instances ran on, never terminated.
func TestAnInstanceThatLostItsClusterTagIsKeptAndReported(t *testing.T) {
	f := newFixture(t, nil)
	running := f.runningClaim("untagged", nil)
	standby := f.WaitForClaim(f.otherClaim("untagged", running.Name), v1beta1.PhaseStandby)
	for _, c := range []*v1beta1.NodeClaim{running, standby} {
		if err := f.Cloud.RemoveTag(c.Status.InstanceID, v1beta1.TagCluster); err != nil {
			t.Fatal(err)
		}
	}

	for _, c := range []*v1beta1.NodeClaim{running, standby} {
		f.Eventually("claim "+c.Name+" says its instance is not the cluster's", func() bool { return lostFor(f.Claim(c.Name), v1beta1.ReasonOwnershipLost) })
		f.WaitForEvent(c.Name, v1beta1.ReasonOwnershipLost)
	}
	if c := f.Claim(running.Name); c.Status.Phase != v1beta1.PhaseRunning ||
		!strings.Contains(meta.FindStatusCondition(c.Status.Conditions, v1beta1.ConditionInstanceLost).Message, running.Status.InstanceID) {
		t.Fatalf("claim %s: phase %s, conditions %+v", c.Name, c.Status.Phase, c.Status.Conditions)
	}
	f.Eventually("the pool is Degraded for its two instances", func() bool {
		c := f.poolDegraded("untagged", v1beta1.ReasonOwnershipLost)
		return c != nil && strings.HasPrefix(c.Message, "2 of the pool's instances")
	})
	f.WaitForEvent("untagged", v1beta1.ReasonOwnershipLost)

	// Deleted, the standby claim cordons its Node and waits for the instance to be the
	// cluster's again.
	if err := f.Env.Client.Delete(f.Ctx, standby); err != nil {
		t.Fatal(err)
	}
	f.WaitForClaim(standby.Name, v1beta1.PhaseTerminating)
	f.afterGarbageCollection()
	f.assertKept(false, running)
	f.assertKept(true, standby)
	f.CheckInvariants()

	for _, c := range []*v1beta1.NodeClaim{running, standby} {
		if err := f.Cloud.SetTag(c.Status.InstanceID, v1beta1.TagCluster, clusterName); err != nil {
			t.Fatal(err)
		}
	}
	f.Eventually("the running claim says its instance is found again", func() bool {
		c := meta.FindStatusCondition(f.Claim(running.Name).Status.Conditions, v1beta1.ConditionInstanceLost)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == nodeclaim.ReasonInstanceFound
	})
	f.waitRemoved(standby.Name)
	if i, _ := f.Instance(standby.Status.InstanceID); i.State != cloudprovider.StateShuttingDown && i.State != cloudprovider.StateTerminated {
		t.Errorf("the deleted claim's instance %s is %s once it is the cluster's again", i.ID, i.State)
	}
	f.Eventually("the pool is no longer Degraded", func() bool {
		pool := &v1beta1.NodePool{}
		return f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: "untagged"}, pool) == nil && meta.IsStatusConditionFalse(pool.Status.Conditions, v1beta1.ConditionDegraded)
	})
	f.assertKept(false, running)
	f.CheckInvariants()
}

// otherClaim waits until the pool has a claim other than name, and returns its name.
func (f *fixture) otherClaim(pool, name string) string {
	f.T.Helper()
	var other string
	f.Eventually("pool "+pool+" has another claim than "+name, func() bool {
		for _, c := range f.Claims(pool) {
			if c.Name != name {
				other = c.Name
				return true
			}
		}
		return false
	})
	return other
}

// After --cluster-name changes, every instance of the old name is not the cluster's:
// nothing is deleted or terminated, every claim and its pool say so, and going back to
// the old name ends it. On main before the fix every claim was removed as InstanceGone
// and every Node deleted, and the instances ran on, never terminated.
func TestAChangeOfClusterNameDeletesNothing(t *testing.T) {
	f := newFixture(t, nil)
	f.Pool("renamed", 2, func(p *v1beta1.NodePool) { p.Spec.Standby.Max = ptr.To[int32](3) })
	f.SetDesired(f.WaitForPhase("renamed", 2, v1beta1.PhaseStandby)[0].Name, v1beta1.DesiredRunning)
	var running *v1beta1.NodeClaim
	f.Eventually("one claim runs", func() bool {
		for _, c := range f.Claims("renamed") {
			if c.Status.Phase == v1beta1.PhaseRunning {
				running = &c
			}
		}
		return running != nil
	})
	claims := []*v1beta1.NodeClaim{running}
	f.Eventually("the pool has two standby claims beside the running one", func() bool {
		standby := 0
		for _, c := range f.Claims("renamed") {
			if c.Status.Phase == v1beta1.PhaseStandby {
				standby++
			}
		}
		return standby == 2
	})
	for _, c := range f.Claims("renamed") {
		if c.Name != running.Name {
			claims = append(claims, &c)
		}
	}

	rename := func(name string) {
		f.Cloud.SetClusterName(name)
		opts := f.Opts
		opts.NodeClaim.ClusterName = name
		f.RestartOperator(opts)
	}
	rename("renamed")
	for _, c := range claims {
		f.Eventually("claim "+c.Name+" says its instance is not the cluster's", func() bool { return lostFor(f.Claim(c.Name), v1beta1.ReasonOwnershipLost) })
	}
	f.Eventually("the pool is Degraded for its three instances", func() bool {
		c := f.poolDegraded("renamed", v1beta1.ReasonOwnershipLost)
		return c != nil && strings.HasPrefix(c.Message, fmt.Sprintf("%d of the pool's instances", len(claims)))
	})
	f.afterGarbageCollection()
	f.assertKept(false, claims...)
	if n := len(f.Claims("renamed")); n != len(claims) {
		t.Fatalf("the pool has %d claims, want its %d", n, len(claims))
	}

	rename(clusterName)
	for _, c := range claims {
		f.Eventually("claim "+c.Name+" says its instance is found again", func() bool { return !lostFor(f.Claim(c.Name), v1beta1.ReasonOwnershipLost) })
	}
	f.assertKept(false, claims...)
	f.CheckInvariants()
}

// When most of a pool's instances vanish at once, the cloud's word is not taken at
// once: their claims and Nodes stay, say so, and the pool is Degraded, until the cloud
// has kept not finding them for the confirmation period; then they are removed and the
// pool warms replacements. On main before the fix each claim was removed, and its Node
// deleted, as soon as its instance was not found.
func TestInstancesVanishingAtOnceAreWaitedOut(t *testing.T) {
	const confirmation = 3 * time.Second
	f := newFixture(t, func(o *nodeclaim.Options) {
		o.InstanceVisibilityGrace = time.Second
		o.VanishConfirmation = confirmation
	})
	before := terminations(t, "vanish-at-once", nodeclaim.ReasonInstanceGone)
	f.Pool("vanish-at-once", 4, nil)
	claims := f.WaitForPhase("vanish-at-once", 4, v1beta1.PhaseStandby)
	gone := []*v1beta1.NodeClaim{&claims[0], &claims[1], &claims[2]}
	if err := f.Cloud.Vanish(claims[0].Status.InstanceID, claims[1].Status.InstanceID, claims[2].Status.InstanceID); err != nil {
		t.Fatal(err)
	}

	var firstSeen time.Time
	for _, c := range gone {
		f.Eventually("claim "+c.Name+" says its instance vanished with others", func() bool { return lostFor(f.Claim(c.Name), v1beta1.ReasonInstancesVanished) })
		if since := meta.FindStatusCondition(f.Claim(c.Name).Status.Conditions, v1beta1.ConditionInstanceLost).LastTransitionTime.Time; firstSeen.IsZero() || since.Before(firstSeen) {
			firstSeen = since
		}
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: c.Status.NodeName}, &corev1.Node{}); err != nil {
			t.Fatalf("Node %s of a claim whose instance vanished with others: %v", c.Status.NodeName, err)
		}
	}
	f.Eventually("the pool is Degraded for it", func() bool { return f.poolDegraded("vanish-at-once", v1beta1.ReasonInstancesVanished) != nil })
	f.WaitForEvent("vanish-at-once", v1beta1.ReasonInstancesVanished)

	for _, c := range gone {
		removedAt := f.waitRemoved(c.Name)
		if waited := removedAt.Sub(firstSeen); waited < confirmation {
			t.Errorf("claim %s was removed %s after its instance was first missed, before the %s confirmation", c.Name, waited, confirmation)
		}
		f.Eventually("Node "+c.Status.NodeName+" is deleted with its claim", func() bool {
			return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: c.Status.NodeName}, &corev1.Node{}))
		})
	}
	if n := terminations(t, "vanish-at-once", nodeclaim.ReasonInstanceGone) - before; n != 3 {
		t.Errorf("stratos_nodeclaims_terminated_total{reason=%q} rose by %v, want 3", nodeclaim.ReasonInstanceGone, n)
	}
	f.WaitForPhase("vanish-at-once", 4, v1beta1.PhaseStandby)
	f.CheckInvariants()
}

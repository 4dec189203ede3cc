package warmpool_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// A pool whose node class asks for hibernation hibernates its standby node, and a start
// resumes it: the Node is Ready again in the same boot, sooner after the start than the
// stopped node of a pool without hibernation. Both are read on the fake cloud's own
// timeline, not the test's clock.
func TestStandbyNodesHibernateAndResumeSooner(t *testing.T) {
	f := newFixture(t, nil)
	// No jitter, so that the two starts compare the physics alone. Hibernating takes a
	// minute of cloud time (1.5 s at the fixture's scale): the Node a frozen kubelet
	// leaves shows the heartbeat of its last post, which the start must not mistake for
	// one after it; condition times are stored to the second, and a real hibernation
	// takes longer than a second, as this one does.
	physics := &v1beta1.FakePhysics{JitterPercent: ptr.To[int32](0), HibernateDelay: v1beta1.NewDuration(time.Minute)}
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "sleepy"}, Spec: v1beta1.FakeNodeClassSpec{Hibernate: true, Physics: physics}})
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: v1beta1.FakeNodeClassSpec{Physics: physics}})
	for _, name := range []string{"sleepy", "plain"} {
		f.Pool(name, 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = name })
	}
	sleepy := f.WaitForPhase("sleepy", 1, v1beta1.PhaseStandby)[0]
	plain := f.WaitForPhase("plain", 1, v1beta1.PhaseStandby)[0]
	for claim, hibernated := range map[*v1beta1.NodeClaim]bool{&sleepy: true, &plain: false} {
		f.assertStandby(claim)
		if run := f.run(claim); run.Hibernated != hibernated {
			t.Errorf("claim %s: the instance's run %+v, want hibernated %v", claim.Name, run, hibernated)
		}
	}
	bootIDs := map[string]string{}
	for _, claim := range []v1beta1.NodeClaim{sleepy, plain} {
		bootIDs[claim.Name] = f.Node(claim.Status.NodeName).Status.NodeInfo.BootID
		f.SetDesired(claim.Name, v1beta1.DesiredRunning)
	}
	runs := map[string]fakecloud.Run{}
	for _, claim := range []v1beta1.NodeClaim{sleepy, plain} {
		running := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
		f.assertRunning(running)
		runs[claim.Name] = f.run(running)
	}

	resumed, booted := runs[sleepy.Name], runs[plain.Name]
	if resumed.Boot != 1 || resumed.Resumes != 1 || booted.Boot != 2 || booted.Resumes != 0 {
		t.Errorf("runs: hibernated pool %+v, plain pool %+v; want a resume of boot 1 and a boot 2", resumed, booted)
	}
	if resumedIn, bootedIn := resumed.ReadyAt.Sub(resumed.StartedAt), booted.ReadyAt.Sub(booted.StartedAt); resumedIn >= bootedIn {
		t.Errorf("start to Node Ready: %s resumed from hibernation, %s booted; want the resume sooner", resumedIn, bootedIn)
	}
	if got := f.Node(sleepy.Status.NodeName).Status.NodeInfo.BootID; got != bootIDs[sleepy.Name] {
		t.Errorf("the resumed Node reports boot %s, want %s from before the hibernation", got, bootIDs[sleepy.Name])
	}
	if got := f.Node(plain.Status.NodeName).Status.NodeInfo.BootID; got == bootIDs[plain.Name] {
		t.Errorf("the started Node still reports boot %s", got)
	}
	f.CheckInvariants()
}

// run is the fake cloud's record of the claim's instance's current run.
func (f *fixture) run(claim *v1beta1.NodeClaim) fakecloud.Run {
	f.T.Helper()
	run, ok := f.Cloud.CurrentRun(claim.Status.InstanceID)
	if !ok {
		f.T.Fatalf("the cloud does not know instance %s of claim %s", claim.Status.InstanceID, claim.Name)
	}
	return run
}

// refusingHibernation is the cloud with every hibernation refused, as EC2 refuses to
// hibernate an instance not launched for it, instance by instance.
type refusingHibernation struct{ cloudprovider.API }

func (r refusingHibernation) StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error) {
	if !hibernate {
		return r.API.StopInstances(ctx, ids, false)
	}
	errs := map[string]error{}
	for _, id := range ids {
		errs[id] = cloudprovider.NewError(cloudprovider.CodeUnsupported, cloudprovider.OpStop, id, "not launched for hibernation")
	}
	return errs, nil
}

// An instance that cannot hibernate, although its class asks for it, is stopped
// instead, with a Warning Event on its claim: the pool still gets its standby node.
func TestAStandbyNodeThatCannotHibernateStops(t *testing.T) {
	f := newFixture(t, nil)
	f.Op.Stop()
	f.Op = stack.StartOperator(t, f.Env, refusingHibernation{API: f.Cloud}, f.Opts)
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "sleepy"}, Spec: v1beta1.FakeNodeClassSpec{Hibernate: true}})
	f.Pool("sleepy", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "sleepy" })

	claim := f.WaitForPhase("sleepy", 1, v1beta1.PhaseStandby)[0]
	f.assertStandby(&claim)
	if run := f.run(&claim); run.Hibernated {
		t.Errorf("the instance hibernated through a cloud that refuses it: %+v", run)
	}
	f.WaitForEvent(claim.Name, nodeclaim.ReasonHibernationUnsupported)
	note, ok := f.EventNote(claim.Name, nodeclaim.ReasonHibernationUnsupported)
	if !ok || !strings.Contains(note, claim.Status.InstanceID) {
		t.Errorf("Event %s = %q, %v; want one naming instance %s", nodeclaim.ReasonHibernationUnsupported, note, ok, claim.Status.InstanceID)
	}
	f.CheckInvariants()
}

package fakecloud

import (
	"context"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

// hibernating is a launch request whose node class asks for hibernation.
func hibernating(token string) *cloudprovider.CreateRequest {
	req := request(token)
	req.NodeClass = &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{Hibernate: true}}
	return req
}

// wantPhase checks what the kubelet of an instance reports now.
func wantPhase(t *testing.T, c *Cloud, id string, phase physics.NodePhase, boot int) physics.NodeView {
	t.Helper()
	v := view(t, c, id)
	if v.Phase != phase || v.Boot != boot {
		t.Fatalf("kubelet reports %v in boot %d, want %v in boot %d", v.Phase, v.Boot, phase, boot)
	}
	return v
}

// The defaults say what the physics are for: hibernating takes longer than stopping,
// and a resumed Node is Ready sooner than a booted one.
func TestDefaultHibernatePhysics(t *testing.T) {
	p := physics.DefaultPhysics()
	if p.HibernateDelay <= p.StopDelay {
		t.Errorf("hibernating takes %s, a stop %s: the memory written first must take longer", p.HibernateDelay, p.StopDelay)
	}
	if p.HibernateResumeDelay >= p.ResumeDelay {
		t.Errorf("a resume takes %s to Ready, a boot %s: the resume must be sooner", p.HibernateResumeDelay, p.ResumeDelay)
	}
}

// A hibernated instance stops after HibernateDelay with its kubelet frozen, not shut
// down; a start resumes the same boot, Ready HibernateResumeDelay after it runs.
func TestHibernateTimeline(t *testing.T) {
	c, clk := newCloud(t, Options{})
	p := c.physics
	inst := running(t, c, clk, hibernating("a"))
	clk.Step(p.BootDelay + p.ReadyDelay)
	wantPhase(t, c, inst.ID, physics.NodeReady, 1)

	if err := act(t, hibernateStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	wantState(t, c, inst.ID, cloudprovider.StateStopping)
	wantPhase(t, c, inst.ID, physics.NodeFrozen, 1)
	clk.Step(p.HibernateDelay - tick)
	wantState(t, c, inst.ID, cloudprovider.StateStopping)
	clk.Step(tick)
	wantState(t, c, inst.ID, cloudprovider.StateStopped)
	wantPhase(t, c, inst.ID, physics.NodeFrozen, 1)
	if run, _ := c.CurrentRun(inst.ID); !run.Hibernated {
		t.Errorf("run = %+v, want one that ended in a hibernation", run)
	}

	clk.Step(time.Hour)
	startedAt := clk.Now()
	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	wantState(t, c, inst.ID, cloudprovider.StatePending)
	wantPhase(t, c, inst.ID, physics.NodeFrozen, 1)
	clk.Step(p.StartDelay)
	wantState(t, c, inst.ID, cloudprovider.StateRunning)
	clk.Step(p.HibernateResumeDelay - tick)
	wantPhase(t, c, inst.ID, physics.NodeFrozen, 1)
	clk.Step(tick)
	v := wantPhase(t, c, inst.ID, physics.NodeReady, 1)
	if want := startedAt.Add(p.StartDelay + p.HibernateResumeDelay); !v.Since.Equal(want) || v.Resumes != 1 {
		t.Errorf("Ready since %s after %d resumes, want since %s after 1", v.Since, v.Resumes, want)
	}
	run, _ := c.CurrentRun(inst.ID)
	if want := (Run{Boot: 1, Resumes: 1, StartedAt: startedAt, ReadyAt: v.Since}); run != want {
		t.Errorf("run = %+v, want %+v", run, want)
	}

	// A plain stop of the resumed boot ends it; the next start boots.
	if err := act(t, plainStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	wantPhase(t, c, inst.ID, physics.NodeShuttingDown, 1)
	clk.Step(p.StopDelay)
	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(p.StartDelay + p.ResumeDelay)
	wantPhase(t, c, inst.ID, physics.NodeReady, 2)
}

// A start is sooner to Ready from hibernation than from a stop, with the same physics.
func TestResumeIsSoonerThanBoot(t *testing.T) {
	c, clk := newCloud(t, Options{})
	p := c.physics
	slept := running(t, c, clk, hibernating("slept"))
	stopped := running(t, c, clk, request("stopped"))
	clk.Step(p.BootDelay + p.ReadyDelay)
	if err := act(t, hibernateStop(c), slept.ID); err != nil {
		t.Fatal(err)
	}
	if err := act(t, plainStop(c), stopped.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(p.HibernateDelay)
	errs, err := c.StartInstances(context.Background(), []string{slept.ID, stopped.ID})
	if err != nil || len(errs) != 0 {
		t.Fatalf("start: %v %v", errs, err)
	}
	resumed, _ := c.CurrentRun(slept.ID)
	booted, _ := c.CurrentRun(stopped.ID)
	if resumed.ReadyAt.Sub(resumed.StartedAt) != p.StartDelay+p.HibernateResumeDelay || booted.ReadyAt.Sub(booted.StartedAt) != p.StartDelay+p.ResumeDelay {
		t.Fatalf("start to Ready: resumed %s, booted %s", resumed.ReadyAt.Sub(resumed.StartedAt), booted.ReadyAt.Sub(booted.StartedAt))
	}
	if resumed.Boot != 1 || booted.Boot != 2 {
		t.Errorf("boots: resumed %d, booted %d; want 1 and 2", resumed.Boot, booted.Boot)
	}
}

// EC2 refuses to hibernate an instance not launched with hibernation configured: the
// fake refuses that instance alone, which keeps running, and hibernates the others.
func TestHibernateRefusedWithoutHibernationConfigured(t *testing.T) {
	c, clk := newCloud(t, Options{})
	plain := running(t, c, clk, request("plain"))
	able := create(t, c, hibernating("able"))
	clk.Step(c.physics.BootDelay)

	errs, err := c.StopInstances(context.Background(), []string{plain.ID, able.ID}, true)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, errs[plain.ID], cloudprovider.CodeUnsupported)
	if errs[able.ID] != nil {
		t.Errorf("the instance launched for hibernation: %v", errs[able.ID])
	}
	wantState(t, c, plain.ID, cloudprovider.StateRunning)
	wantState(t, c, able.ID, cloudprovider.StateStopping)
	// A plain stop works for either.
	if err := act(t, plainStop(c), plain.ID); err != nil {
		t.Errorf("plain stop: %v", err)
	}
}

// Hibernated before its kubelet registered, a boot registers after the resume as much
// later as it was frozen.
func TestHibernationCarriesOnTheBootWhereItFroze(t *testing.T) {
	c, clk := newCloud(t, Options{})
	p := c.physics
	inst := running(t, c, clk, hibernating("a"))
	clk.Step(p.BootDelay / 2)
	wantPhase(t, c, inst.ID, physics.NodeAbsent, 1)
	if err := act(t, hibernateStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(p.HibernateDelay)
	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(p.StartDelay + p.HibernateResumeDelay)
	wantPhase(t, c, inst.ID, physics.NodeAbsent, 1)
	clk.Step(p.BootDelay/2 - tick)
	wantPhase(t, c, inst.ID, physics.NodeAbsent, 1)
	clk.Step(tick)
	wantPhase(t, c, inst.ID, physics.NodeNotReady, 1)
	clk.Step(p.ReadyDelay)
	wantPhase(t, c, inst.ID, physics.NodeReady, 1)
}

func TestHibernatePhysicsFromTheNodeClass(t *testing.T) {
	c, clk := newCloud(t, Options{})
	req := hibernating("a")
	req.NodeClass.(*v1beta1.FakeNodeClass).Spec.Physics = &v1beta1.FakePhysics{
		HibernateDelay: v1beta1.NewDuration(time.Minute), HibernateResumeDelay: v1beta1.NewDuration(time.Second),
	}
	inst := running(t, c, clk, req)
	clk.Step(c.physics.BootDelay + c.physics.ReadyDelay)
	if err := act(t, hibernateStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Minute - tick)
	wantState(t, c, inst.ID, cloudprovider.StateStopping)
	clk.Step(tick)
	wantState(t, c, inst.ID, cloudprovider.StateStopped)
	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.StartDelay + time.Second)
	if run, _ := c.CurrentRun(inst.ID); !run.ReadyAt.Equal(clk.Now()) {
		t.Errorf("Ready at %s, want %s", run.ReadyAt, clk.Now())
	}
}

// Each instance call takes CallLatency on the cloud's clock, and acts at its end.
func TestCallLatency(t *testing.T) {
	c, clk := newCloud(t, Options{CallLatency: 300 * time.Millisecond})
	answered := make(chan *cloudprovider.Instance, 1)
	go func() {
		inst, err := c.Create(context.Background(), request("a"))
		if err != nil {
			t.Error(err)
		}
		answered <- inst
	}()
	waitForWaiters(t, clk)
	if n := len(c.Instances()); n != 0 {
		t.Fatalf("the cloud knows %d instances while the launch call is in flight, want none yet", n)
	}
	select {
	case <-answered:
		t.Fatal("the call answered before its latency passed")
	default:
	}
	clk.Step(300 * time.Millisecond)
	select {
	case inst := <-answered:
		if inst == nil || !inst.LaunchTime.Equal(simtest.Epoch.Add(300*time.Millisecond)) {
			t.Fatalf("launched %+v, want an instance launched at the end of the call", inst)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not answer once its latency passed")
	}
}

// waitForWaiters polls until something waits on the fake clock.
func waitForWaiters(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("nothing waits on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

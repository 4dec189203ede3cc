package fakecloud

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

const tick = time.Nanosecond

func TestLaunchTimeline(t *testing.T) {
	c, clk := newCloud(t, Options{})
	inst := create(t, c, request("a"))
	p := c.physics

	wantState(t, c, inst.ID, cloudprovider.StatePending)
	clk.Step(p.LaunchDelay - tick)
	wantState(t, c, inst.ID, cloudprovider.StatePending)
	clk.Step(tick)
	wantState(t, c, inst.ID, cloudprovider.StateRunning)

	steps := []struct {
		step  time.Duration
		phase physics.NodePhase
	}{
		{p.BootDelay - tick, physics.NodeAbsent},
		{tick, physics.NodeNotReady},
		{p.ReadyDelay - tick, physics.NodeNotReady},
		{tick, physics.NodeReady},
		// No pod asked for an image: none arrives.
		{time.Hour, physics.NodeReady},
	}
	for n, s := range steps {
		clk.Step(s.step)
		if v := view(t, c, inst.ID); v.Phase != s.phase || len(v.Images) != 0 {
			t.Fatalf("step %d: phase %v with images %v, want %v with none", n, v.Phase, v.Images, s.phase)
		}
	}
	if run, _ := c.CurrentRun(inst.ID); run.ReadyAt.Sub(simtest.Epoch) != 40*time.Second {
		t.Errorf("cold path took %s", run.ReadyAt.Sub(simtest.Epoch))
	}
}

func TestStopStartTimeline(t *testing.T) {
	c, clk := newCloud(t, Options{})
	inst := running(t, c, clk, request("a"))
	p := c.physics
	clk.Step(p.BootDelay + p.ReadyDelay)

	if err := act(t, plainStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	wantState(t, c, inst.ID, cloudprovider.StateStopping)
	if v := view(t, c, inst.ID); v.Phase != physics.NodeShuttingDown {
		t.Fatalf("phase after stop = %v, want ShuttingDown", v.Phase)
	}
	clk.Step(p.StopDelay - tick)
	wantState(t, c, inst.ID, cloudprovider.StateStopping)
	clk.Step(tick)
	wantState(t, c, inst.ID, cloudprovider.StateStopped)

	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	wantState(t, c, inst.ID, cloudprovider.StatePending)
	if v := view(t, c, inst.ID); v.Phase != physics.NodeAbsent || v.Boot != 2 {
		t.Fatalf("after start: phase %v boot %d, want Absent in boot 2", v.Phase, v.Boot)
	}
	clk.Step(p.StartDelay - tick)
	wantState(t, c, inst.ID, cloudprovider.StatePending)
	clk.Step(tick)
	wantState(t, c, inst.ID, cloudprovider.StateRunning)
	if v := view(t, c, inst.ID); v.Phase != physics.NodeNotReady {
		t.Fatalf("phase when running again = %v, want NotReady", v.Phase)
	}
	clk.Step(p.ResumeDelay)
	if v := view(t, c, inst.ID); v.Phase != physics.NodeReady {
		t.Fatalf("phase after resume = %v, want Ready", v.Phase)
	}
}

func TestTerminateTimeline(t *testing.T) {
	c, clk := newCloud(t, Options{})
	inst := running(t, c, clk, request("a"))
	if err := act(t, c.TerminateInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	wantState(t, c, inst.ID, cloudprovider.StateShuttingDown)
	clk.Step(c.physics.TerminateDelay - tick)
	wantState(t, c, inst.ID, cloudprovider.StateShuttingDown)
	clk.Step(tick)
	wantState(t, c, inst.ID, cloudprovider.StateTerminated)
	// The kubelet never came up in this boot, so it has nothing to report.
	if v := view(t, c, inst.ID); v.Phase != physics.NodeAbsent {
		t.Errorf("phase = %v, want Absent", v.Phase)
	}
}

func TestTimeScale(t *testing.T) {
	c, clk := newCloud(t, Options{TimeScale: 10})
	inst := create(t, c, request("a"))
	clk.Step(time.Second - tick)
	wantState(t, c, inst.ID, cloudprovider.StatePending)
	clk.Step(tick)
	wantState(t, c, inst.ID, cloudprovider.StateRunning)
}

func TestJitterBoundedAndSeeded(t *testing.T) {
	p := physics.DefaultPhysics()
	rng := rand.New(rand.NewPCG(1, 1))
	low, high := 10*time.Second, time.Duration(0)
	for range 1000 {
		d := p.Draw(rng, 10*time.Second, 1)
		low, high = min(low, d), max(high, d)
	}
	if low < 9*time.Second || high > 11*time.Second {
		t.Errorf("10s with 10%% jitter spread to [%s, %s]", low, high)
	}
	if high-low < 1500*time.Millisecond {
		t.Errorf("10s with 10%% jitter hardly varies: [%s, %s]", low, high)
	}

	launches := func(seed int64) []time.Time {
		c, _ := newCloud(t, Options{Seed: seed, Physics: physics.DefaultPhysics()})
		var times []time.Time
		for _, token := range []string{"a", "b", "c"} {
			inst := create(t, c, request(token))
			times = append(times, c.instances[inst.ID].nextAt)
		}
		return times
	}
	first, again, other := launches(7), launches(7), launches(8)
	for n := range first {
		if !first[n].Equal(again[n]) {
			t.Errorf("launch %d: seed 7 gave %s then %s", n, first[n], again[n])
		}
	}
	if first[0].Equal(other[0]) && first[1].Equal(other[1]) {
		t.Errorf("seeds 7 and 8 gave the same launch times")
	}
}

func TestPhysicsWith(t *testing.T) {
	base := physics.DefaultPhysics()
	if got := base.With(nil); got != base {
		t.Errorf("With(nil) = %+v", got)
	}
	got := base.With(&v1beta1.FakePhysics{
		LaunchDelay: v1beta1.NewDuration(time.Second), JitterPercent: new(int32),
		HibernateDelay: v1beta1.NewDuration(time.Minute), HibernateResumeDelay: v1beta1.NewDuration(2 * time.Second),
	})
	want := base
	want.LaunchDelay, want.JitterPercent = time.Second, 0
	want.HibernateDelay, want.HibernateResumeDelay = time.Minute, 2*time.Second
	if got != want {
		t.Errorf("With = %+v, want %+v", got, want)
	}
}

func TestNodeClassPhysics(t *testing.T) {
	c, clk := newCloud(t, Options{})
	req := request("a")
	req.NodeClass = &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{Physics: &v1beta1.FakePhysics{
		LaunchDelay: v1beta1.NewDuration(2 * time.Second),
	}}}
	inst := create(t, c, req)
	clk.Step(2 * time.Second)
	wantState(t, c, inst.ID, cloudprovider.StateRunning)
	// Other delays keep the cloud's values.
	clk.Step(c.physics.BootDelay - tick)
	if v := view(t, c, inst.ID); v.Phase != physics.NodeAbsent {
		t.Errorf("registered before the cloud's boot delay")
	}
}

func TestNextTransition(t *testing.T) {
	c, clk := newCloud(t, Options{})
	if _, ok := c.NextTransition(); ok {
		t.Fatal("an empty cloud has a next transition")
	}
	create(t, c, request("a"))
	p := c.physics
	for _, want := range []time.Duration{
		p.LaunchDelay,
		p.LaunchDelay + p.BootDelay,
		p.LaunchDelay + p.BootDelay + p.ReadyDelay,
	} {
		next, ok := c.NextTransition()
		if !ok || !next.Equal(simtest.Epoch.Add(want)) {
			t.Fatalf("next transition = %s %v, want %s", next, ok, simtest.Epoch.Add(want))
		}
		clk.SetTime(next)
	}
	clk.Step(time.Second)
	if next, ok := c.NextTransition(); ok {
		t.Errorf("a Ready instance no pod asked anything of has a next transition at %s", next)
	}
}

package fakecloud

import (
	"fmt"
	"slices"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

// pullStates is a compact view of where images stand: "image state at", the time in
// seconds from simtest.Epoch.
func pullStates(pulls []physics.ImagePull) []string {
	var out []string
	for _, p := range pulls {
		out = append(out, fmt.Sprintf("%s %s %gs", p.Image, p.State, p.At.Sub(simtest.Epoch).Seconds()))
	}
	return out
}

func wantPulls(t *testing.T, what string, got []physics.ImagePull, want ...string) {
	t.Helper()
	if states := pullStates(got); !slices.Equal(states, want) {
		t.Errorf("%s: %q, want %q", what, states, want)
	}
}

// One puller per machine: images are pulled one after the other, in the order pods ask
// for them, each taking the pull delay; an image being pulled for one pod is not pulled
// again for another.
func TestImagePullsOneAtATime(t *testing.T) {
	at := func(s float64) time.Time { return simtest.Epoch.Add(time.Duration(s * float64(time.Second))) }
	s := physics.NewImageStore("i-1", simtest.NoJitter(), 1, nil)

	pulls, queued := s.Request(at(0), at(0), []string{"app:1", "sidecar:1", "app:1"})
	if !queued {
		t.Error("nothing queued for an empty disk")
	}
	wantPulls(t, "first pod", pulls, "app:1 Pulling 5s", "sidecar:1 Pulling 10s")

	// A second pod, bound a second later, waits for the pull under way, and its other
	// image queues behind the first pod's.
	pulls, _ = s.Request(at(1), at(1), []string{"sidecar:1", "db:1"})
	wantPulls(t, "second pod", pulls, "sidecar:1 Pulling 10s", "db:1 Pulling 15s")

	if got := s.Present(at(5).Add(-tick)); len(got) != 0 {
		t.Errorf("on disk before the first pull ends: %v", got)
	}
	if got := s.Present(at(10)); !slices.Equal(got, []string{"app:1", "sidecar:1"}) {
		t.Errorf("on disk at 10 s: %v", got)
	}
	for _, c := range []struct{ after, want float64 }{{0, 5}, {5, 10}, {10, 15}} {
		if next, ok := s.NextEvent(at(c.after)); !ok || !next.Equal(at(c.want)) {
			t.Errorf("next landing after %gs: %v %v, want %gs", c.after, next, ok, c.want)
		}
	}
	if next, ok := s.NextEvent(at(15)); ok {
		t.Errorf("a landing after the last pull: %v", next)
	}

	// The puller idle, a pull starts when its pod asks, even if that was a while ago:
	// a kubelet that sees the pod late still pulled from when it was bound.
	pulls, _ = s.Request(at(40), at(30), []string{"app:1", "cache:1"})
	wantPulls(t, "a later pod", pulls, "app:1 Present 5s", "cache:1 Present 35s")
	if queued := func() bool { _, q := s.Request(at(40), at(40), []string{"cache:1"}); return q }(); queued {
		t.Error("an image on disk was queued again")
	}
}

// The pull delay is jittered per machine, image and attempt, the same whatever order
// the draws are made in, and within the jitter.
func TestPullDelayDraw(t *testing.T) {
	p := physics.DefaultPhysics()
	low, high := time.Hour, time.Duration(0)
	for n := range 200 {
		image := fmt.Sprintf("app:%d", n)
		d := p.PullDelay("i-1", image, 0, 2)
		low, high = min(low, d), max(high, d)
		if again := p.PullDelay("i-1", image, 0, 2); again != d {
			t.Fatalf("%s: %s then %s", image, d, again)
		}
	}
	// 5 s with 10 % jitter at time scale 2.
	if low < 2250*time.Millisecond || high > 2750*time.Millisecond || high-low < 250*time.Millisecond {
		t.Errorf("pull delays spread over [%s, %s]", low, high)
	}
	if p.PullDelay("i-1", "app:1", 0, 1) == p.PullDelay("i-2", "app:1", 0, 1) && p.PullDelay("i-1", "app:1", 0, 1) == p.PullDelay("i-1", "app:1", 1, 1) {
		t.Error("other machines and attempts draw the same delay")
	}
}

// readyInstance launches an instance of req and steps the clock until its Node is Ready.
func readyInstance(t *testing.T, c *Cloud, clk *testingclock.FakeClock, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, string) {
	t.Helper()
	inst := running(t, c, clk, req)
	clk.Step(c.physics.BootDelay + c.physics.ReadyDelay)
	wantPhase(t, c, inst.ID, physics.NodeReady, 1)
	return inst, c.instances[inst.ID].hostname
}

func pull(t *testing.T, c *Cloud, nodeName string, boot int, from time.Time, images ...string) []physics.ImagePull {
	t.Helper()
	pulls, ok := c.PullImages(nodeName, boot, from, images)
	if !ok {
		t.Fatalf("the kubelet of %s refused to pull in boot %d", nodeName, boot)
	}
	return pulls
}

// Images stay on the disk across a stop and a start; a pull a stop cut short is lost,
// and done again, whole, when a pod asks after the start.
func TestImagesAcrossStopAndStart(t *testing.T) {
	c, clk := newCloud(t, Options{})
	p := c.physics
	inst, name := readyInstance(t, c, clk, request("a"))

	pull(t, c, name, 1, clk.Now(), "app:1", "sidecar:1")
	clk.Step(p.ImagePullDelay + p.ImagePullDelay/2)
	if err := act(t, plainStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(p.StopDelay)
	if got := view(t, c, inst.ID).Images; !slices.Equal(got, []string{"app:1"}) {
		t.Fatalf("stopped: %v on disk, want app:1 alone", got)
	}
	if _, ok := c.PullImages(name, 1, clk.Now(), []string{"sidecar:1"}); ok {
		t.Error("a stopped instance's kubelet pulled")
	}
	if next, ok := c.NextEvent(clk.Now()); ok {
		t.Errorf("the cut pull still lands at %v", next)
	}

	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(p.StartDelay + p.ResumeDelay)
	readyAt := wantPhase(t, c, inst.ID, physics.NodeReady, 2).Since
	if _, ok := c.PullImages(name, 1, clk.Now(), []string{"sidecar:1"}); ok {
		t.Error("the kubelet pulled for a pod of the boot before")
	}
	// Asked from before the Node was Ready again (a pod bound while it was stopped),
	// the pull starts once it is.
	wantPulls(t, "after the start", pull(t, c, name, 2, simtest.Epoch, "app:1", "sidecar:1"),
		"app:1 Present 45s", fmt.Sprintf("sidecar:1 Pulling %gs", readyAt.Add(p.ImagePullDelay).Sub(simtest.Epoch).Seconds()))
	clk.Step(p.ImagePullDelay)
	if got := view(t, c, inst.ID).Images; !slices.Equal(got, []string{"app:1", "sidecar:1"}) {
		t.Errorf("after the pull again: %v on disk", got)
	}
}

// A hibernation cuts a pull as a stop does; after the resume it is pulled again from the
// thaw.
func TestHibernationCutsPulls(t *testing.T) {
	c, clk := newCloud(t, Options{})
	p := c.physics
	inst, name := readyInstance(t, c, clk, hibernating("a"))
	pull(t, c, name, 1, clk.Now(), "app:1")
	clk.Step(p.ImagePullDelay / 2)
	if err := act(t, hibernateStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(p.HibernateDelay)
	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(p.StartDelay + p.HibernateResumeDelay)
	thawedAt := clk.Now()
	wantPhase(t, c, inst.ID, physics.NodeReady, 1)
	if got := view(t, c, inst.ID).Images; len(got) != 0 {
		t.Fatalf("on disk after a hibernation cut the pull: %v", got)
	}
	// The pod asked in the same boot, before the hibernation: the pull starts at the thaw.
	wantPulls(t, "after the resume", pull(t, c, name, 1, simtest.Epoch, "app:1"),
		fmt.Sprintf("app:1 Pulling %gs", thawedAt.Add(p.ImagePullDelay).Sub(simtest.Epoch).Seconds()))
}

// An image of the class's imagePullErrors never lands: its pull fails after the pull
// delay, the kubelet backs off, and a pod that comes later tries again. Other images
// are pulled as usual.
func TestImagePullErrors(t *testing.T) {
	c, clk := newCloud(t, Options{})
	p := c.physics
	req := request("a")
	req.NodeClass = &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{ImagePullErrors: []string{"missing:1"}}}}
	inst, name := readyInstance(t, c, clk, req)
	readyAt := clk.Now()
	sec := func(d time.Duration) string { return fmt.Sprintf("%gs", readyAt.Add(d).Sub(simtest.Epoch).Seconds()) }

	wantPulls(t, "asked", pull(t, c, name, 1, readyAt, "missing:1", "app:1"),
		"missing:1 Pulling "+sec(p.ImagePullDelay), "app:1 Pulling "+sec(2*p.ImagePullDelay))
	clk.Step(2 * p.ImagePullDelay)
	pulls := pull(t, c, name, 1, readyAt, "missing:1", "app:1")
	wantPulls(t, "after both pulls", pulls, "missing:1 Failed "+sec(p.ImagePullDelay), "app:1 Present "+sec(2*p.ImagePullDelay))
	// 10 s is the kubelet's first image pull back-off.
	if want := readyAt.Add(p.ImagePullDelay + 10*time.Second); !pulls[0].BackOffAt.Equal(want) {
		t.Errorf("back-off from %v, want %v", pulls[0].BackOffAt, want)
	}
	if got := view(t, c, inst.ID).Images; !slices.Equal(got, []string{"app:1"}) {
		t.Errorf("on disk: %v, want app:1 alone", got)
	}
	// The same pod asking again is still failed; a pod bound since tries again.
	wantPulls(t, "a new pod", pull(t, c, name, 1, clk.Now(), "missing:1"), "missing:1 Pulling "+sec(3*p.ImagePullDelay))
}

// The kubelet pulls only while it runs and reports Ready in the boot the pod saw.
func TestPullImagesRefusedUnlessReady(t *testing.T) {
	c, clk := newCloud(t, Options{})
	inst := running(t, c, clk, request("a"))
	name := c.instances[inst.ID].hostname
	clk.Step(c.physics.BootDelay)
	wantPhase(t, c, inst.ID, physics.NodeNotReady, 1)
	if _, ok := c.PullImages(name, 1, clk.Now(), []string{"app:1"}); ok {
		t.Error("a kubelet whose Node is not Ready pulled")
	}
	if _, ok := c.PullImages("elsewhere", 1, clk.Now(), []string{"app:1"}); ok {
		t.Error("a Node the cloud does not know pulled")
	}
	c.SetFaults(Faults{NeverRegister: 1})
	lost := running(t, c, clk, request("lost"))
	clk.Step(c.physics.BootDelay + c.physics.ReadyDelay)
	if _, ok := c.PullImages(c.instances[lost.ID].hostname, 1, clk.Now(), []string{"app:1"}); ok {
		t.Error("a kubelet that never registered pulled")
	}
}

// A shutdown keeps what is on disk, a pull that ended at that very moment included, and
// loses the rest: the pull under way, those queued and the failures.
func TestShutdownKeepsWhatLanded(t *testing.T) {
	at := func(s float64) time.Time { return simtest.Epoch.Add(time.Duration(s * float64(time.Second))) }
	s := physics.NewImageStore("i-1", simtest.NoJitter(), 1, []string{"missing:1"})
	s.Request(at(0), at(0), []string{"missing:1", "app:1", "sidecar:1"})
	s.Shutdown(at(10))
	if got := s.Present(at(60)); !slices.Equal(got, []string{"app:1"}) {
		t.Errorf("on disk after the shutdown: %v, want app:1, which landed at it", got)
	}
	if next, ok := s.NextEvent(at(10)); ok {
		t.Errorf("a pull lands after the shutdown, at %v", next)
	}
	wantPulls(t, "in the next boot", func() []physics.ImagePull { p, _ := s.Request(at(60), at(60), []string{"missing:1"}); return p }(),
		"missing:1 Pulling 65s")
}

// Package fakecloud is a simulated cloud for tests, the demo and the benchmarks. Instances
// move through EC2's states with realistic, jittered delays on an injectable clock;
// faults can be injected at runtime or per node class; a kubelet simulator registers
// the instances' Nodes with a real API server. docs/fake-cloud.md describes it.
package fakecloud

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// Options configure a Cloud. The zero value is a cloud in real time with default physics.
type Options struct {
	// Clock drives every delay; a k8s.io/utils/clock/testing FakeClock makes tests step
	// through time. Defaults to the real clock.
	Clock clock.WithTicker
	// TimeScale divides every delay of the physics: 10 runs ten times faster. Defaults to 1.
	TimeScale float64
	// Seed seeds jitter, fault rolls and instance IDs, so that a run can be replayed.
	Seed int64
	// Physics are the timings; the zero value means DefaultPhysics().
	Physics physics.Physics
	// Catalog is the instance types on sale; defaults to DefaultCatalog() in Zones.
	// Offerings outside Zones are ignored.
	Catalog []*cloudprovider.InstanceType
	// Region defaults to DefaultRegion.
	Region string
	// Zones default to DefaultZones().
	Zones []string
	// TerminatedRetention is how long a terminated instance stays visible before the
	// cloud forgets it, in clock time and not scaled. Defaults to an hour, as on EC2.
	TerminatedRetention time.Duration
	// CallLatency is how long each instance call (Create, Start, Stop, Terminate,
	// DescribeInstances, ListInstances) takes, in clock time and not scaled: it stands
	// for the network and the cloud's API, which the operator's batching meets in real
	// time. The call acts at its end, so that nothing it starts is under way before the
	// caller hears of it. InstanceTypes answers at once, as the EC2 provider answers it
	// from a cache. Defaults to 0: every call acts and answers at once.
	CallLatency time.Duration
	// ClusterName is the cluster the cloud's caller is, as the EC2 provider's
	// --cluster-name: an instance whose stratos.sh/cluster tag is not this name is not
	// the caller's. DescribeInstances reports it with NotOwned set, and starts, stops and
	// terminations refuse it with NotOwned, as the EC2 provider does. Empty means that
	// every instance is the caller's.
	ClusterName string
	// Notices configure the notice queue (Notices); the zero value is SQS's defaults.
	Notices NoticeOptions
}

// Cloud is the fake cloud. It implements cloudprovider.API and is safe for concurrent use.
type Cloud struct {
	clock     clock.WithTicker
	timeScale float64
	physics   physics.Physics
	catalog   []*cloudprovider.InstanceType
	region    string
	zones     []string
	retention time.Duration
	latency   time.Duration

	// changes holds one pending notification for the kubelet simulator.
	changes chan struct{}

	mu        sync.Mutex
	rng       *rand.Rand
	faults    Faults
	limiters  map[string]*rate.Limiter
	calls     map[string]int
	instances map[string]*instance
	// tokens maps client tokens to the instances they launched.
	tokens map[string]string
	// launched counts launches, to number private IPs.
	launched int
	// clusterName is Options.ClusterName, changed by SetClusterName.
	clusterName string

	// notices is the notice queue; stateChanges says when transitions post to it.
	notices      *noticeQueue
	stateChanges StateChangeNotices
	// events numbers the events posted, for their IDs.
	events int
}

var _ cloudprovider.API = (*Cloud)(nil)

// New returns a fake cloud.
func New(opts Options) *Cloud {
	c := &Cloud{
		clock:     opts.Clock,
		timeScale: opts.TimeScale,
		physics:   opts.Physics,
		region:    opts.Region,
		zones:     slices.Clone(opts.Zones),
		retention: opts.TerminatedRetention,
		latency:   opts.CallLatency,
		changes:   make(chan struct{}, 1),
		rng:       rand.New(rand.NewPCG(uint64(opts.Seed), uint64(opts.Seed))),
		limiters:  map[string]*rate.Limiter{},
		calls:     map[string]int{},
		instances: map[string]*instance{},
		tokens:    map[string]string{},

		clusterName: opts.ClusterName,
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.timeScale <= 0 {
		c.timeScale = 1
	}
	if c.physics == (physics.Physics{}) {
		c.physics = physics.DefaultPhysics()
	}
	if c.region == "" {
		c.region = DefaultRegion
	}
	if len(c.zones) == 0 {
		c.zones = DefaultZones()
	}
	if c.retention == 0 {
		c.retention = time.Hour
	}
	c.catalog = opts.Catalog
	if c.catalog == nil {
		c.catalog = catalogFor(c.zones)
	}
	c.notices = newNoticeQueue(c, opts.Notices)
	c.stateChanges = opts.Notices.StateChanges
	return c
}

// Name is "fake".
func (c *Cloud) Name() string { return "fake" }

// Calls returns how many API calls each operation received, failed ones included; a
// batch call counts once.
func (c *Cloud) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// Instances returns every instance the cloud knows, terminated ones included, by ID.
func (c *Cloud) Instances() []cloudprovider.Instance {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance(c.clock.Now())
	all := make([]cloudprovider.Instance, 0, len(c.instances))
	for _, inst := range c.instances {
		all = append(all, *inst.snapshot())
	}
	sort.Slice(all, func(a, b int) bool { return all[a].ID < all[b].ID })
	return all
}

// Run is what the cloud knows of an instance's current run, from its launch or last
// start, for tests that check the timeline rather than the wall clock.
type Run struct {
	// Boot numbers the instance's boots from 1; a resume from hibernation stays in the
	// boot it resumes.
	Boot int
	// Resumes counts the resumes from hibernation in this boot.
	Resumes int
	// Hibernated: the run ended in a hibernation, which froze the boot.
	Hibernated bool
	// StartedAt is when the launch or start call of the run was made.
	StartedAt time.Time
	// ReadyAt is when the kubelet reports the Node Ready in the run; zero for an instance
	// whose kubelet never registers.
	ReadyAt time.Time
}

// CurrentRun returns the current run of an instance; false when the cloud does not know it.
func (c *Cloud) CurrentRun(id string) (Run, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance(c.clock.Now())
	inst, ok := c.instances[id]
	if !ok {
		return Run{}, false
	}
	b := inst.boot
	run := Run{Boot: b.Number, Resumes: b.Resumes, Hibernated: b.Hibernated, StartedAt: b.StartedAt}
	if !inst.neverRegister {
		run.ReadyAt = b.ReportsFrom()
	}
	return run, true
}

// Changes signals, without blocking the cloud, that instances changed other than by the
// passing of time. Signals coalesce; the channel has one reader, the kubelet simulator.
func (c *Cloud) Changes() <-chan struct{} { return c.changes }

// Physics returns the timings the cloud runs with, for the kubelet simulator's tests.
func (c *Cloud) Physics() physics.Physics { return c.physics }

// Clock is the clock the cloud's physics run on.
func (c *Cloud) Clock() clock.WithTicker { return c.clock }

// NextTransition returns the time of the earliest scheduled change still to come: of an
// instance's state, or of what its kubelet reports.
func (c *Cloud) NextTransition() (time.Time, bool) {
	return c.NextEvent(c.clock.Now())
}

// NextEvent returns the earliest scheduled change after the given time: of an instance's
// state, or of what its kubelet reports.
func (c *Cloud) NextEvent(after time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Time
	for _, inst := range c.instances {
		if t, ok := inst.nextEvent(after); ok && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next, !next.IsZero()
}

func (c *Cloud) notify() {
	select {
	case c.changes <- struct{}{}:
	default:
	}
}

// advance brings every instance up to now, publishing its state changes, and forgets
// those terminated long enough ago. The caller holds the lock.
func (c *Cloud) advance(now time.Time) {
	for id, inst := range c.instances {
		inst.advance(now)
		c.publish(inst)
		if inst.State == cloudprovider.StateTerminated && !now.Before(inst.terminatedAt.Add(c.retention)) {
			c.forget(id)
		}
	}
}

// forget drops an instance and its client token. The caller holds the lock.
func (c *Cloud) forget(id string) {
	if inst, ok := c.instances[id]; ok && inst.token != "" {
		delete(c.tokens, inst.token)
	}
	delete(c.instances, id)
}

// callLatency waits out the call latency before a call acts, or until ctx ends. The
// caller does not hold the lock: other calls go on meanwhile.
func (c *Cloud) callLatency(ctx context.Context) {
	if c.latency <= 0 {
		return
	}
	timer := c.clock.NewTimer(c.latency)
	defer timer.Stop()
	select {
	case <-timer.C():
	case <-ctx.Done():
	}
}

// drawer returns the delays of physics p, jittered from the seeded source and scaled.
// The caller holds the lock.
func (c *Cloud) drawer(p physics.Physics) draw {
	return func(d time.Duration) time.Duration { return p.Draw(c.rng, d, c.timeScale) }
}

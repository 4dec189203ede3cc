// Package ec2machines feeds the kubelet simulator (kubelet.Kubelet) from the instances of
// an EC2 endpoint, moto in the simulator's aws mode: each running instance tagged with
// the cluster gets a Node named by its private DNS name, with provider ID
// aws:///ZONE/ID, the labels and taints its user data asks the kubelet for, and the
// capacity EC2 describes for its type. The emulator changes states at once, so the fake
// cloud's physics time the kubelet from the moment an instance is seen running, and
// its shutdown from the moment it is seen stopping or gone.
package ec2machines

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/utils/clock"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// DefaultPollInterval is how often the instances are described: a local emulator
// answers in milliseconds, and a kubelet's registration is timed from the poll that
// sees its instance run.
const DefaultPollInterval = 500 * time.Millisecond

// Options configure Machines.
type Options struct {
	// EC2 is a client of the endpoint. Its calls are the simulator's, not the
	// operator's; Calls counts them.
	EC2 *ec2.Client
	// ClusterName: only instances tagged stratos.sh/cluster with it run kubelets.
	ClusterName string
	// Region is the Nodes' topology.kubernetes.io/region.
	Region string
	// Physics time the kubelets: a launch seen running registers after LaunchDelay +
	// BootDelay and is Ready ReadyDelay later; a start seen running registers after
	// StartDelay and is Ready ResumeDelay later; the images pods ask for pull one
	// at a time, ImagePullDelay each (physics.ImageStore); containers start
	// ContainerStartDelay after their pod is bound and its images are on disk. The zero
	// value means physics.DefaultPhysics().
	Physics   physics.Physics
	TimeScale float64
	// Seed seeds the jitter.
	Seed int64
	// Clock defaults to the real clock.
	Clock clock.WithTicker
	// PollInterval defaults to DefaultPollInterval.
	PollInterval time.Duration
}

// Machines are the instances of the cluster as their kubelets live them. It implements
// kubelet.Machines and is safe for concurrent use; Start polls the endpoint.
type Machines struct {
	opts    Options
	changes chan struct{}

	mu       sync.Mutex
	rng      *rand.Rand
	machines map[string]*machine
	// byNode maps Node names to instance IDs.
	byNode map[string]string
	// shapes are the instance types described so far, by name.
	shapes    map[string]*cloudprovider.InstanceType
	instances []cloudprovider.Instance
	calls     map[string]int
	problems  []string
}

// machine is one instance and its kubelet.
type machine struct {
	id, nodeName, providerID, privateIP, zone, arch string
	shape                                           *cloudprovider.InstanceType
	registration                                    Registration
	// broken: the kubelet cannot start (its user data does not parse), so it never
	// registers, as on a real node.
	broken  bool
	running bool
	boot    physics.Boot
	// images are the container images on the instance's disk and its kubelet's pulls.
	images *physics.ImageStore
}

var _ kubelet.Machines = (*Machines)(nil)

// New returns the machines of an EC2 endpoint; nothing is described before Start or Sync.
func New(opts Options) *Machines {
	if opts.Physics == (physics.Physics{}) {
		opts.Physics = physics.DefaultPhysics()
	}
	if opts.TimeScale <= 0 {
		opts.TimeScale = 1
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	return &Machines{
		opts:     opts,
		changes:  make(chan struct{}, 1),
		rng:      rand.New(rand.NewPCG(uint64(opts.Seed), uint64(opts.Seed))),
		machines: map[string]*machine{},
		byNode:   map[string]string{},
		shapes:   map[string]*cloudprovider.InstanceType{},
		calls:    map[string]int{},
	}
}

// NeedLeaderElection is false: kubelets run whoever leads Stratos.
func (m *Machines) NeedLeaderElection() bool { return false }

// Start polls the endpoint every PollInterval (real time) until ctx ends.
func (m *Machines) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("ec2-machines")
	poll := time.NewTicker(m.opts.PollInterval)
	defer poll.Stop()
	for {
		if err := m.Sync(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Describing the instances failed; trying again at the next poll")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
		}
	}
}

// Sync describes the cluster's instances once and brings the machines up to them.
func (m *Machines) Sync(ctx context.Context) error {
	described, err := m.describeInstances(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	var fresh []ec2types.Instance
	for _, inst := range described {
		if _, known := m.machines[aws.ToString(inst.InstanceId)]; !known {
			fresh = append(fresh, inst)
		}
	}
	m.mu.Unlock()
	admitted, err := m.admit(ctx, fresh)

	m.mu.Lock()
	defer m.mu.Unlock()
	for _, mc := range admitted {
		m.machines[mc.id] = mc
		if mc.nodeName != "" {
			m.byNode[mc.nodeName] = mc.id
		}
	}
	now := m.opts.Clock.Now()
	changed := len(admitted) > 0
	seen := map[string]bool{}
	m.instances = m.instances[:0]
	for _, inst := range described {
		id := aws.ToString(inst.InstanceId)
		seen[id] = true
		m.instances = append(m.instances, snapshot(inst))
		if mc, ok := m.machines[id]; ok && inst.State != nil && m.observe(mc, inst.State.Name, now) {
			changed = true
		}
	}
	// An instance EC2 no longer lists is gone with its kubelet.
	for id, mc := range m.machines {
		if !seen[id] {
			delete(m.machines, id)
			delete(m.byNode, mc.nodeName)
			changed = true
		}
	}
	if changed {
		m.notify()
	}
	return err
}

// notify signals the Node loop, without blocking, that machines changed.
func (m *Machines) notify() {
	select {
	case m.changes <- struct{}{}:
	default:
	}
}

// observe moves a kubelet's timeline to its instance's state and reports whether it
// changed. An instance seen running that was not boots; one seen stopping, stopped or
// terminating shuts its kubelet down. The caller holds the lock.
func (m *Machines) observe(mc *machine, state ec2types.InstanceStateName, now time.Time) bool {
	p := m.opts.Physics
	switch {
	case state == ec2types.InstanceStateNameRunning && !mc.running:
		mc.running = true
		b := physics.Boot{Number: mc.boot.Number + 1}
		if b.Number == 1 {
			b.RegisterAt = now.Add(m.draw(p.LaunchDelay) + m.draw(p.BootDelay))
			b.ReadyAt = b.RegisterAt.Add(m.draw(p.ReadyDelay))
		} else {
			// The kubelet comes back as the instance runs again; images pulled in earlier
			// boots are still on disk.
			b.RegisterAt = now.Add(m.draw(p.StartDelay))
			b.ReadyAt = b.RegisterAt.Add(m.draw(p.ResumeDelay))
		}
		mc.boot = b
		return true
	case state != ec2types.InstanceStateNameRunning && state != ec2types.InstanceStateNamePending && mc.running:
		mc.running = false
		mc.boot.ShutdownAt = now
		// Pulls in progress are lost with the kubelet.
		mc.images.Shutdown(now)
		return true
	}
	return false
}

// draw is one jittered, scaled occurrence of a delay. The caller holds the lock.
func (m *Machines) draw(d time.Duration) time.Duration {
	return m.opts.Physics.Draw(m.rng, d, m.opts.TimeScale)
}

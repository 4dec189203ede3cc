package nodeclaim

import "time"

// PollIntervalWithNotices is the default PollInterval when state-change notices wake the
// claims: five times fewer describes of waiting instances than the 2s poll, while a
// notice lost still costs no more than 10s.
const PollIntervalWithNotices = 10 * time.Second

// Options tune the NodeClaim controllers. Zero fields take the defaults below.
type Options struct {
	// ClusterName goes into the ownership tags of every instance; garbage collection
	// only considers instances tagged with it.
	ClusterName string
	// LaunchTimeout deletes a claim whose instance could not be launched for this long
	// after the claim was created. Defaults to 5m, as Karpenter's.
	LaunchTimeout time.Duration
	// LaunchBackoffBase is how long a claim whose launch failed for a reason that may pass
	// by itself (throttling, a cloud error) waits before it tries again; each further
	// failure doubles the wait, up to LaunchBackoffMax, with up to 20% added at random.
	// A launch that succeeds, or the claim's removal, starts the schedule again.
	// Defaults to 2s.
	LaunchBackoffBase time.Duration
	// LaunchBackoffMax caps the wait between retries of a failing launch. Defaults to 1m:
	// a claim retries about ten times within the default launch timeout instead of 150.
	LaunchBackoffMax time.Duration
	// RegistrationTimeout deletes a claim whose Node has not registered this long after
	// the launch. Defaults to 15m, as Karpenter's.
	RegistrationTimeout time.Duration
	// InitializationTimeout deletes a claim asked to run whose Node registered but is not
	// initialised (Ready, network up, startup taints gone) this long after registering:
	// pods wait on it, and only a fresh node helps them. Claims meant for standby have
	// their pool's warmup timeout instead. Defaults to 10m.
	InitializationTimeout time.Duration
	// StartTimeout deletes a claim whose started instance's Node is not Ready again this
	// long after the start: a standby node that cannot come back is broken, and the pool
	// warms a fresh one. Defaults to 3m, about ten times a start's usual 12-15s.
	StartTimeout time.Duration
	// StopTimeout forces the stop of an instance still not stopped this long after its
	// claim began to stop it (EC2's StopInstances with Force: the operating system is not
	// waited for), and removes the claim, terminating the instance, if the forced stop
	// has not ended within as long again. A stop usually takes 20-60s, and a hibernation
	// writes the instance's memory to its disk first. Defaults to 10m.
	StopTimeout time.Duration
	// InstanceVisibilityGrace is how long after its launch a NotFound for an instance
	// means that the cloud does not show it yet rather than that it is gone: EC2's API is
	// eventually consistent, and DescribeInstances may not know an instance for a while
	// after RunInstances made it. The lifecycle controller polls such a claim and garbage
	// collection leaves it alone until the grace has passed. Defaults to 2m.
	InstanceVisibilityGrace time.Duration
	// VanishConfirmation is how long the cloud must keep not finding the instances of a
	// pool whose instances vanished at once (see massVanish) before their claims are
	// removed; until then they say InstanceLost and their pool is Degraded. An instance
	// that vanishes alone is removed at once. Defaults to 10m.
	VanishConfirmation time.Duration
	// PollInterval is how often a claim waiting on the cloud (a stop, a termination, a
	// failed launch) checks it again. Node and pod changes wake claims at once.
	// Defaults to 2s, or to PollIntervalWithNotices when StateChangeNotices is set.
	PollInterval time.Duration
	// StateChangeNotices says that the cloud's instance state-change notices reach the
	// claims (an interruption queue is read, which asks the lifecycle controller to look
	// at a claim whose instance is stopping, stopped, shutting down or terminated): a
	// claim waiting on its instance is woken by the notice, and the poll is only the net
	// under a notice lost or late, so it defaults to the longer PollIntervalWithNotices.
	StateChangeNotices bool
	// ResyncInterval is how often a settled claim (standby or running) checks that its
	// instance is still as it left it. Defaults to 5m.
	ResyncInterval time.Duration
	// MaxConcurrentReconciles bounds the claims worked on at once; concurrent starts
	// and stops are batched into few cloud calls. Defaults to 64.
	MaxConcurrentReconciles int
	// GCInterval is how often garbage collection looks for leaks. Defaults to 1m.
	GCInterval time.Duration
	// GCGracePeriod is how old a leak must be before it is removed, so that an instance
	// whose claim is being written is not mistaken for one. Defaults to 2m.
	GCGracePeriod time.Duration
	// PrePullNamespace is the namespace of the pods that pull a pool's warmup images on
	// its warming nodes. Defaults to kube-system; the operator passes its own namespace.
	PrePullNamespace string
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.LaunchTimeout, 5*time.Minute)
	set(&o.LaunchBackoffBase, 2*time.Second)
	set(&o.LaunchBackoffMax, time.Minute)
	set(&o.RegistrationTimeout, 15*time.Minute)
	set(&o.InitializationTimeout, 10*time.Minute)
	set(&o.StartTimeout, 3*time.Minute)
	set(&o.StopTimeout, 10*time.Minute)
	set(&o.InstanceVisibilityGrace, 2*time.Minute)
	set(&o.VanishConfirmation, 10*time.Minute)
	if o.StateChangeNotices {
		set(&o.PollInterval, PollIntervalWithNotices)
	}
	set(&o.PollInterval, 2*time.Second)
	set(&o.ResyncInterval, 5*time.Minute)
	set(&o.GCInterval, time.Minute)
	set(&o.GCGracePeriod, 2*time.Minute)
	if o.PrePullNamespace == "" {
		o.PrePullNamespace = "kube-system"
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 64
	}
	return o
}

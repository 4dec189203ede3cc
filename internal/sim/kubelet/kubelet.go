package kubelet

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/internal/sim/physics"
)

const (
	// syncWorkers bound the API calls the simulator makes at once.
	syncWorkers = 16
	// retryInterval is the real time after which a failed sync is tried again.
	retryInterval = time.Second
	// armTolerance is how far a clock may move while a timer is armed before the timer
	// is armed again; see wake.
	armTolerance = time.Millisecond
)

// The kubelet simulator's permissions: its own ClusterRole, stratos-fake-kubelets
// (config/rbac/fake-kubelets, `make generate`), which the chart binds only when the fake
// cloud runs inside the operator. Only these kubelets create Nodes; the operator never does.
// Nodes: registered, read (and watched through the manager's cache), status posted.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// Pods: read from the cache, status posted, deleted once their containers stopped.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// Node Leases, renewed as a kubelet renews them, in kube-node-lease (a Role there).
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;patch,namespace=kube-node-lease
// kube-node-lease itself is read before a first Lease (kube-apiserver creates it).
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get,resourceNames=kube-node-lease

// Machines is what the kubelet simulator reads of a cloud: what the kubelet of each
// machine reports at a moment, and when that changes next. The fake Cloud is one; the
// simulator's aws mode feeds the same kubelets from the instances of an EC2 emulator
// (internal/sim/ec2machines).
type Machines interface {
	// Clock is the clock the machines' timelines are on.
	Clock() clock.WithTicker
	// Changes signals, coalesced, that machines changed other than by the passing of
	// time. The channel has one reader, the kubelet simulator's Node loop.
	Changes() <-chan struct{}
	// NodeViews returns what the kubelet of every machine reports now, by instance ID,
	// and the clock time it holds for.
	NodeViews() (time.Time, []physics.NodeView)
	// NextEvent returns the earliest change after the given clock time of what a
	// kubelet reports.
	NextEvent(after time.Time) (time.Time, bool)
	// PodHost returns the clock time and what the pods bound to the Node nodeName see
	// of the machine behind it, with the container start delay of the pod podKey
	// (namespace/name) in the current boot; false when no machine runs that Node.
	PodHost(nodeName, podKey string) (time.Time, physics.PodHost, bool)
	// PullImages asks the kubelet of the Node nodeName, in its boot boot, for the images
	// a pod needs from the clock time from on (the later of the pod bound and the Node
	// Ready): the machine's ImageStore queues those neither on disk nor being pulled
	// (ImageStore.Request). It returns where each image stands now; false when the
	// machine no longer runs that boot with its kubelet Ready, for the pod to wait for
	// the Node's next change. Implementations notify Changes when a pull is queued, so
	// that the Node loop reports the image once it lands.
	PullImages(nodeName string, boot int, from time.Time, images []string) ([]physics.ImagePull, bool)
}

// messageRuntimeDown is what a kubelet whose container runtime went down reports.
const messageRuntimeDown = "container runtime is down"

// KubeletOptions configure the kubelet simulator.
type KubeletOptions struct {
	// HeartbeatInterval is how often Ready Nodes renew their Lease. It is real time and
	// not scaled, because kube-controller-manager's grace periods run in real time.
	// Defaults to 10s, the kubelet's.
	HeartbeatInterval time.Duration
	// KubeletVersion is reported in the Nodes' nodeInfo. Defaults to v1.37.0.
	KubeletVersion string
}

// Kubelet simulates the kubelets of a cloud's machines (the fake cloud's instances, or
// an emulator's) against an API server: it registers Nodes, reports them Ready or
// shutting down, pulls images and renews Leases, following each machine's timeline. It
// never deletes a Node. It is a controller-runtime Runnable; give it a client that reads
// from the API server rather than from a cache.
type Kubelet struct {
	machines Machines
	client   client.Client
	opts     KubeletOptions

	// reported is what was reported per instance ID; only Start's goroutine uses it.
	reported map[string]reported
	// leaseNamespace is true once kube-node-lease is known to exist.
	leaseNamespace atomic.Bool
}

// reported is what the kubelet of one instance has reported during its current boot.
type reported struct {
	boot       int
	resumes    int
	registered bool
	phase      physics.NodePhase
	images     int
	nodeUID    types.UID
	leased     bool
	// renewed is the real time the Lease was last renewed: each Node renews its own
	// HeartbeatInterval after the last, as kubelets do, rather than all at one tick.
	renewed time.Time
	csiNode bool
	// sickness is what was reported of the kubelet failing (sicknessKey).
	sickness string
}

// sicknessKey names how a view's kubelet fails, to post its status again when that
// changes; empty while it is healthy.
func sicknessKey(v physics.NodeView) string {
	if v.Unhealthy == nil {
		return ""
	}
	return fmt.Sprintf("%t/%s", v.Unhealthy.Silent, v.Unhealthy.Condition)
}

// NewKubelet returns a kubelet simulator for the machines of a cloud, such as the fake
// Cloud.
func NewKubelet(machines Machines, c client.Client, opts KubeletOptions) *Kubelet {
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = 10 * time.Second
	}
	if opts.KubeletVersion == "" {
		opts.KubeletVersion = "v1.37.0"
	}
	return &Kubelet{machines: machines, client: c, opts: opts, reported: map[string]reported{}}
}

// NeedLeaderElection is false: kubelets run whoever leads Stratos.
func (k *Kubelet) NeedLeaderElection() bool { return false }

// leaseChecks is how many times per heartbeat interval the kubelets look for Leases due:
// a Lease is renewed at most an interval over, and the renewals of 500 Nodes spread
// over the interval as their Nodes turned Ready, instead of 500 at one tick.
const leaseChecks = 10

// Start syncs the Nodes whenever the cloud changes, an instance's timeline reaches its
// next event or a Lease is due, until ctx is done.
func (k *Kubelet) Start(ctx context.Context) error {
	ctx = logf.IntoContext(ctx, logf.FromContext(ctx).WithName("fake-kubelet"))
	heartbeat := time.NewTicker(k.opts.HeartbeatInterval / leaseChecks)
	defer heartbeat.Stop()
	for {
		synced, failed := k.sync(ctx)
		var retry <-chan time.Time
		if failed {
			retry = time.After(retryInterval)
		}
		next, stop := k.wake(synced)
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-k.machines.Changes():
		case <-heartbeat.C:
		case <-retry:
		case <-next:
		}
		stop()
	}
}

// sync brings every Node up to the cloud's timeline and returns the clock time it
// synced to, and whether any instance failed.
func (k *Kubelet) sync(ctx context.Context) (time.Time, bool) {
	now, views := k.machines.NodeViews()
	results := make([]reported, len(views))
	errs := make([]error, len(views))
	workqueue.ParallelizeUntil(ctx, syncWorkers, len(views), func(n int) {
		results[n], errs[n] = k.syncNode(ctx, views[n], k.reported[views[n].InstanceID], now)
	})
	failed := false
	k.reported = make(map[string]reported, len(views))
	for n, v := range views {
		k.reported[v.InstanceID] = results[n]
		if errs[n] != nil && ctx.Err() == nil {
			failed = true
			logf.FromContext(ctx).Error(errs[n], "Syncing the Node failed; retrying", "node", v.NodeName, "instance", v.InstanceID)
		}
	}
	return now, failed
}

// syncNode reports what changed for one instance and returns what is now reported.
func (k *Kubelet) syncNode(ctx context.Context, v physics.NodeView, r reported, now time.Time) (reported, error) {
	if r.boot != v.Boot {
		// A new boot: a real kubelet registers again and posts its status from scratch.
		r = reported{boot: v.Boot}
	}
	if r.resumes != v.Resumes {
		// Resumed from hibernation: the same kubelet, registered already, posts its
		// status and renews its Lease as soon as it thaws.
		r.resumes, r.phase, r.leased = v.Resumes, physics.NodeAbsent, false
	}
	if v.Phase == physics.NodeAbsent || v.Phase == physics.NodeFrozen {
		// Not up yet, or frozen by a hibernation: nothing is reported, and what was
		// reported last stays.
		return r, nil
	}
	if !r.registered {
		if err := k.register(ctx, v, now); err != nil {
			return r, err
		}
		r.registered = true
	}
	if v.Unhealthy != nil && v.Unhealthy.Silent {
		// A hung kubelet posts nothing and renews nothing: what it reported last stays
		// until kube-controller-manager marks the Node unknown.
		return r, nil
	}
	if r.phase != v.Phase || r.images != len(v.Images) || r.sickness != sicknessKey(v) {
		uid, err := k.updateStatus(ctx, v, now)
		if err != nil {
			return r, err
		}
		r.phase, r.images, r.nodeUID, r.sickness = v.Phase, len(v.Images), uid, sicknessKey(v)
	}
	if v.Phase == physics.NodeReady && !r.csiNode && r.nodeUID != "" {
		if err := k.publishCSINode(ctx, v, r.nodeUID); err != nil {
			return r, err
		}
		r.csiNode = true
	}
	if v.Phase == physics.NodeReady && (!r.leased || time.Since(r.renewed) >= k.opts.HeartbeatInterval) {
		renewed := time.Now()
		if err := k.renewLease(ctx, v, r.nodeUID, renewed); err != nil {
			return r, err
		}
		r.leased, r.renewed = true, renewed
	}
	return r, nil
}

// wake returns a channel that fires at the cloud's next event after synced, in clock
// time, and a function that releases the timer.
func (k *Kubelet) wake(synced time.Time) (<-chan time.Time, func()) {
	next, ok := k.machines.NextEvent(synced)
	if !ok {
		return nil, func() {}
	}
	clk := k.machines.Clock()
	for {
		armed := clk.Now()
		if !next.After(armed) {
			// The event is due already: the clock moved during the sync.
			due := make(chan time.Time, 1)
			due <- armed
			return due, func() {}
		}
		timer := clk.NewTimer(next.Sub(armed))
		// A fake clock stepped between reading it and arming the timer would make the
		// timer fire late by the step, and a test waiting for the event would wait
		// forever: arm it again if the clock moved meanwhile.
		if clk.Since(armed) < armTolerance {
			return timer.C(), func() { timer.Stop() }
		}
		timer.Stop()
	}
}

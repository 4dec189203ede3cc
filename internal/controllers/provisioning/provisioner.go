// Package provisioning finds capacity for pods kube-scheduler cannot place. It gathers
// them in short batches, simulates their scheduling on a snapshot of the cluster, and
// then, in one pass, asks standby claims to run and creates claims for what they
// cannot hold. It never calls the cloud for an instance: it writes intent on claims.
package provisioning

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capacitybuffer"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/demand"
	"github.com/stratos-sh/stratos/internal/controllers/podstartup"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/podscope"
	"github.com/stratos-sh/stratos/internal/recovery"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/internal/schedulinginput"
	"github.com/stratos-sh/stratos/internal/state"
)

// Options tune provisioning. Zero fields take the defaults.
type Options struct {
	// BatchIdle closes a batch once no pod became unschedulable for this long.
	// Defaults to 25ms.
	BatchIdle time.Duration
	// BatchMax closes a batch this long after it opened, however busy. Defaults to
	// 50ms: kube-scheduler marks a burst's pods over a second or more, and a standby
	// start should not wait for the last of them (docs/provisioning.md has the figures).
	BatchMax time.Duration
	// NominationTTL bounds how long a pod counts as headed for a claim that is not
	// running yet. Defaults to 15m, the registration timeout.
	NominationTTL time.Duration
	// Resync reruns provisioning this often while pods wait, so that expired
	// nominations and freed capacity are seen. Defaults to 30s.
	Resync time.Duration
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.BatchIdle, 25*time.Millisecond)
	set(&o.BatchMax, 50*time.Millisecond)
	set(&o.NominationTTL, 15*time.Minute)
	set(&o.Resync, 30*time.Second)
	return o
}

// Provisioner is the provisioning loop: one decision at a time, over the whole cluster.
type Provisioner struct {
	Client   client.Client
	Cloud    cloudprovider.CloudProvider
	State    *state.Cluster
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Calendar is the clock windows are read on; nil is Clock.
	Calendar clock.PassiveClock
	Options  Options
	// Demand, when set, records the nodes learned pools' pending pods needed.
	Demand *demand.Recorder
	// Startup, when set, is told the pods each decision is about, so that their
	// startup is measured (see podstartup).
	Startup *podstartup.Tracker
	// Scope tells which pending pods to serve (podscope.All or podscope.OptedIn) while
	// another autoscaler may serve them too; nil serves all.
	Scope interface{ Current() podscope.Scope }
	// BufferRoom receives the standby nodes standby-capacity buffers need, for the
	// nodepool controller; nil keeps no standby room.
	BufferRoom *capacitybuffer.StandbyRoom

	batcher *batcher
	// placed writes the placed-pods lists of claims on their way (see placedWriter).
	placed *placedWriter
	// relearned is set once the tracker learned the pods of the first snapshot.
	relearned bool

	mu sync.Mutex
	// unschedulable remembers pods no pool could take, with the pod's and the cluster's
	// versions then: they are not simulated again until one of them changes.
	unschedulable map[types.UID]seen
	// wake opens a batch at wakeTime, when a nomination lapses.
	wake     *time.Timer
	wakeTime time.Time
	// bufferPrint sums up what the buffers' last placement read (see fingerprint).
	bufferPrint    uint64
	bufferPrintSet bool
	// bufferMetrics are the buffers whose series the last pass set.
	bufferMetrics map[string]bool
}

type seen struct {
	resourceVersion string
	version         uint64
}

// NeedLeaderElection is true: only the leader provisions.
func (p *Provisioner) NeedLeaderElection() bool { return true }

// Start runs the loop until ctx ends.
func (p *Provisioner) Start(ctx context.Context) error {
	p.Options = p.Options.WithDefaults()
	p.mu.Lock() // Trigger reads the batcher from another goroutine
	p.batcher = newBatcher(p.Options.BatchIdle, p.Options.BatchMax)
	p.placed = newPlacedWriter(p.patchPlacedPods)
	p.unschedulable = map[types.UID]seen{}
	p.mu.Unlock()
	p.State.OnPending(p.batcher.trigger)
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("provisioning"))
	// A new leader decides, and relearns the pods whose startup it measures, on the whole
	// picture, and at once: pods the leader before placed may be Ready within seconds,
	// and the next pod to wait or the next resync may be far off.
	if !toolscache.WaitForCacheSync(ctx.Done(), p.State.HasSynced) {
		return nil
	}
	p.batcher.trigger()
	go p.resync(ctx)
	go p.placed.run(ctx, writers)
	for p.batcher.wait(ctx) {
		if err := p.Provision(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "Provisioning failed; the next batch tries again")
		}
	}
	return nil
}

// resync opens a batch every Resync, so that waiting pods are looked at again.
func (p *Provisioner) resync(ctx context.Context) {
	ticker := time.NewTicker(p.Options.Resync)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			p.batcher.trigger()
		}
	}
}

// Provision makes one decision for the pods waiting now. A panic of the decision is
// recovered, logged with the input's size and counted; the next batch runs as usual.
func (p *Provisioner) Provision(ctx context.Context) (err error) {
	started := time.Now()
	decided := outcomeIdle
	defer func() {
		if err != nil {
			decided = outcomeError
		}
		metrics.ProvisioningDecisions.WithLabelValues(string(decided)).Inc()
		metrics.ProvisioningDuration.Observe(time.Since(started).Seconds())
	}()
	var size recovery.Size
	defer recovery.Recover(ctx, "provisioning", &size, &err)
	snap := p.State.Snapshot()
	p.wakeAt(snap.NextLapse)
	pods, err := p.inScope(ctx, p.toSimulate(snap))
	if err != nil {
		return err
	}
	if p.Startup != nil {
		if !p.relearned {
			// A new leader: the pods the one before decided on are still starting.
			p.Startup.Relearn(snap)
			p.relearned = true
		}
		p.Startup.Track(pods)
	}
	size = recovery.Size{"pods", len(pods), "nodes", len(snap.Nodes), "claims", len(snap.Claims)}
	if len(pods) == 0 {
		// Buffers keep room with no pod waiting; the pass is skipped when nothing changed.
		return p.keepBufferRoom(ctx, nil)
	}
	in, err := schedulinginput.Builder{Client: p.Client, Cloud: p.Cloud, Clock: p.Clock, Calendar: p.Calendar}.Input(ctx, snap, pods)
	if err != nil {
		return err
	}
	size = append(size, "pools", len(in.Pools), "daemonSets", len(in.DaemonSets))
	simulated := time.Now()
	result := scheduling.Solve(in)
	metrics.SimulationDuration.Observe(time.Since(simulated).Seconds())
	decided = outcomeOf(result)
	logDecision(log.FromContext(ctx), pods, result, poolsOfClaims(in), time.Since(started))
	if err := p.execute(ctx, in, result, snap.Version); err != nil {
		return err
	}
	return p.keepBufferRoom(ctx, result.Existing)
}

// inScope returns the pods the scope serves. Those it leaves out are another
// autoscaler's: they are not simulated, so Stratos neither counts them unschedulable nor
// writes Events about them.
func (p *Provisioner) inScope(ctx context.Context, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	if p.Scope == nil || len(pods) == 0 {
		return pods, nil
	}
	scope := p.Scope.Current()
	if scope != podscope.OptedIn {
		return pods, nil
	}
	pools := &v1beta1.NodePoolList{}
	if err := p.Client.List(ctx, pools); err != nil {
		return nil, err
	}
	return podscope.Filter(scope, pods, podscope.PoolTaints(pools.Items)), nil
}

// Trigger opens a batch now: the scope changed, and pods it serves now may wait.
func (p *Provisioner) Trigger() {
	p.mu.Lock()
	b := p.batcher
	p.mu.Unlock()
	if b != nil {
		b.trigger()
	}
}

// poolsOfClaims maps the claims of a simulation's input to their pools.
func poolsOfClaims(in scheduling.Input) map[string]string {
	out := make(map[string]string, len(in.Claims))
	for _, c := range in.Claims {
		out[c.Claim.Name] = c.Claim.Spec.NodePool
	}
	return out
}

// wakeAt opens a batch at t, when a nomination lapses and its pod waits for capacity
// again; nothing else would tell provisioning. Zero t does nothing.
func (p *Provisioner) wakeAt(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.IsZero() || p.batcher == nil {
		return // nothing lapses, or the loop does not run
	}
	if p.wake != nil && p.wakeTime.After(p.Clock.Now()) && !p.wakeTime.After(t) {
		return // a wake-up by then is set already
	}
	if p.wake != nil {
		p.wake.Stop()
	}
	p.wake, p.wakeTime = time.AfterFunc(max(t.Sub(p.Clock.Now()), 0), p.batcher.trigger), t
}

// toSimulate returns the waiting pods, less those known not to fit anywhere whose pod
// and cluster have not changed since.
func (p *Provisioner) toSimulate(snap state.Snapshot) []*corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pods []*corev1.Pod
	remembered := make(map[types.UID]seen, len(p.unschedulable))
	for _, pod := range snap.Pending {
		if s, ok := p.unschedulable[pod.UID]; ok {
			remembered[pod.UID] = s // pods no longer waiting are forgotten
			if s.resourceVersion == pod.ResourceVersion && s.version == snap.Version {
				continue
			}
		}
		pods = append(pods, pod)
	}
	p.unschedulable = remembered
	return pods
}

// Package disruption gives capacity back and keeps nodes fresh. A Node that has run no
// workload for the pool's consolidateAfter, or (under WhenEmptyOrUnderutilized) whose workload
// fits on the other nodes, goes back to standby while the pool's warm pool is below its
// ceiling (on-demand nodes only), and is terminated otherwise; one whose workload would
// run for less on one new node (an on-demand node once spot is offered again) is
// replaced by it first, then goes the same way (cheaper.go). A Node launched from an
// older template (drifted) or past the pool's expireAfter is replaced: a replacement runs
// before the old one drains, when the pool's limits leave room for it. All of it stays within the pool's
// disruption budgets, never against stratos.sh/do-not-disrupt, never while pods waiting
// now would need the node, and only for nodes whose pods their PodDisruptionBudgets let
// go now. Like provisioning, it only writes intent on claims (desiredState, creation);
// the NodeClaim lifecycle controller drains, honouring PodDisruptionBudgets, and stops or
// terminates. A drain that a budget blocks for too long is taken back: the node runs
// again. A node the cloud is taking away (interrupted) or that stopped being healthy is
// replaced the same way, replacement first, but outside the budgets (repairs within the
// repair limits) and without waiting on PodDisruptionBudgets beforehand: it goes anyway.
package disruption

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/state"
)

// Event reasons of disruption.
const (
	ReasonEmpty             = string(v1beta1.DisruptionEmpty)
	ReasonUnderutilized     = string(v1beta1.DisruptionUnderutilized)
	ReasonDrifted           = string(v1beta1.DisruptionDrifted)
	ReasonExpired           = string(v1beta1.DisruptionExpired)
	ReasonDisruptionAborted = "DisruptionAborted"
	ReasonDisruptionBlocked = "DisruptionBlocked"
	ReasonInvalidBudget     = "InvalidBudget"
	// ReasonDrainAbandoned: a drain a PodDisruptionBudget blocked for too long was taken
	// back; the node runs again.
	ReasonDrainAbandoned = "DrainAbandoned"
)

// Reasons of the DisruptionBlocked condition of a claim.
const (
	// ReasonPodDisruptionBudget: a budget does not let one of the node's pods go now.
	ReasonPodDisruptionBudget = "PodDisruptionBudget"
	// ReasonNotBlocked: no budget holds the node back any more.
	ReasonNotBlocked = "NotBlocked"
)

// DefaultAbandonDrainAfter is how long a drain that PodDisruptionBudgets block may wait,
// in a pool without a terminationGracePeriod, before it is abandoned. Disruption chooses only
// nodes whose pods may go, so a drain is blocked only by a change after the choice — a
// rollout that leaves pods unready, another drain taking the budget's last disruption —
// which a few minutes usually see through; beyond that, a cordoned node holding the
// pool's disruption budget costs more than starting over.
const DefaultAbandonDrainAfter = 5 * time.Minute

// Options tune disruption. Zero fields take the defaults.
type Options struct {
	// PollInterval is the longest time between two passes; a pass also runs when a
	// node's consolidateAfter ends. Defaults to 5s.
	PollInterval time.Duration
	// AbandonDrainAfter is how long a drain that PodDisruptionBudgets block may wait in
	// a pool that sets no terminationGracePeriod before it is abandoned and the node runs again.
	// Defaults to DefaultAbandonDrainAfter.
	AbandonDrainAfter time.Duration
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = 5 * time.Second
	}
	if o.AbandonDrainAfter <= 0 {
		o.AbandonDrainAfter = DefaultAbandonDrainAfter
	}
	return o
}

// Controller is the disruption loop: one pass at a time, over every pool.
type Controller struct {
	Client client.Client
	// Cloud tells the instance types the pools' node classes offer, for replacements.
	Cloud cloudprovider.CloudProvider
	// APIReader reads a candidate again from the API server right before acting on it.
	APIReader client.Reader
	State     *state.Cluster
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// Calendar is the clock windows are read on; nil is Clock.
	Calendar clock.PassiveClock
	Options  Options

	settle settling
	// replacing holds the drifted and expired claims being replaced, by name.
	replacing map[string]*replacement
	// blockedDrains holds, by claim name, since when PodDisruptionBudgets have blocked
	// every pod left on a draining node. Kept in memory: after a restart the wait starts
	// over, which only delays an abandonment.
	blockedDrains map[string]time.Time
	// repairsHeld holds, by pool, what the pool was last told about repairs held because
	// more than half of its nodes are unhealthy ("" for nothing), so that it is told once.
	repairsHeld map[string]string

	// kicks wakes the loop before its poll interval ends; made at first use, since both
	// Trigger and Start may come first.
	kicks     chan struct{}
	kicksOnce sync.Once
}

// Trigger asks for a pass now, without waiting for the poll interval: an interruption
// notice gives minutes, not a poll's worth of seconds to spare. It never blocks; kicks
// that come while one is pending make one pass.
func (c *Controller) Trigger() {
	select {
	case c.kickChannel() <- struct{}{}:
	default:
	}
}

func (c *Controller) kickChannel() chan struct{} {
	c.kicksOnce.Do(func() { c.kicks = make(chan struct{}, 1) })
	return c.kicks
}

// NeedLeaderElection is true: only the leader disrupts.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start runs passes until ctx ends. A new leader decides nothing before the cluster
// state holds everything its informers listed: on half a picture, a node whose pods are
// not known yet looks empty, and room that pods fill looks free.
func (c *Controller) Start(ctx context.Context) error {
	c.Options = c.Options.WithDefaults()
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("disruption"))
	if !toolscache.WaitForCacheSync(ctx.Done(), c.State.HasSynced) {
		return nil
	}
	for {
		wait := c.Options.PollInterval
		next, err := c.Pass(ctx)
		if err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "Disruption pass failed; the next one tries again")
		}
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(c.Clock.Now()), 10*time.Millisecond))
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		case <-c.kickChannel():
			timer.Stop()
		}
	}
}

// event records a decision or why one was not taken, on the claim.
func (c *Controller) event(obj client.Object, reason, note string, args ...any) {
	c.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, reason, "Disrupt", note, args...)
}

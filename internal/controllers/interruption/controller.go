// Package interruption holds the interruption controller: it reads the cloud's notices
// about instances (spot interruption warnings, rebalance recommendations, scheduled
// changes, state changes) from a cloudprovider.NoticeQueue and acts on the claims of
// those instances. An interrupted claim records the notice (status.interruption and the
// Interrupted condition), its Node is cordoned at once, a spot offering is marked
// unavailable, and disruption is woken to replace it; a state change asks the NodeClaim
// lifecycle controller to look at the claim at once. Like disruption it writes intent
// and facts on claims; the lifecycle controller alone calls the cloud for an instance.
package interruption

import (
	"context"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// Options tune the controller. Zero fields take the defaults.
type Options struct {
	// ReceiveBackoffBase is the wait after a failed Receive; each further failure in a
	// row doubles it, up to ReceiveBackoffMax, with up to 10% added at random. Defaults
	// to 1s.
	ReceiveBackoffBase time.Duration
	// ReceiveBackoffMax caps the wait between failing receives. Defaults to 1m.
	ReceiveBackoffMax time.Duration
	// MinReceiveInterval is the least time between the starts of two receives when the
	// first brought nothing: a queue long-polls (SQS waits up to 20s), but one that
	// answers at once must not be asked in a hot loop. Defaults to 1s.
	MinReceiveInterval time.Duration
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.ReceiveBackoffBase <= 0 {
		o.ReceiveBackoffBase = time.Second
	}
	if o.ReceiveBackoffMax <= 0 {
		o.ReceiveBackoffMax = time.Minute
	}
	if o.MinReceiveInterval <= 0 {
		o.MinReceiveInterval = time.Second
	}
	return o
}

// Controller reads the notice queue until its context ends.
type Controller struct {
	// Client reads claims, pools and Nodes from the cache, and writes them.
	Client client.Client
	// APIReader reads a claim again from the API server when a status patch conflicts.
	APIReader client.Reader
	Queue     cloudprovider.NoticeQueue
	// Unavailable is the cloud provider's cache of unavailable offerings: a spot
	// offering interrupted is not launched or started again for its TTL.
	Unavailable *cloudprovider.UnavailableOfferings
	Recorder    events.EventRecorder
	Clock       clock.PassiveClock
	// Kick wakes disruption for a pass now, to replace an interrupted node; nil wakes
	// nothing.
	Kick func()
	// Recheck asks the lifecycle controller to look at a claim at once; nil asks nothing.
	Recheck *nodeclaim.Recheck
	Options Options
}

// NeedLeaderElection is true: only the leader acts on notices, and a message received
// by a replica that is not the leader would wait out its visibility timeout.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start receives and handles messages until ctx ends. A failing queue is asked again
// after a backoff; the loop never ends on an error, as the notices are what lets pods
// move before their node dies.
func (c *Controller) Start(ctx context.Context) error {
	c.Options = c.Options.WithDefaults()
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("interruption"))
	backoff := c.newBackoff()
	for ctx.Err() == nil {
		began := c.Clock.Now()
		msgs, err := c.Queue.Receive(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			metrics.InterruptionMessageErrors.WithLabelValues(errorReceive).Inc()
			wait := backoff.Step()
			log.FromContext(ctx).Error(err, "Receiving the cloud's notices failed; trying again", "after", wait)
			if !sleep(ctx, wait) {
				return nil
			}
			continue
		}
		backoff = c.newBackoff()
		if len(msgs) == 0 {
			if !sleep(ctx, c.Options.MinReceiveInterval-c.Clock.Since(began)) {
				return nil
			}
			continue
		}
		c.handleAll(ctx, msgs)
	}
	return nil
}

// newBackoff is the schedule of waits after failed receives, started afresh.
func (c *Controller) newBackoff() *wait.Backoff {
	return &wait.Backoff{
		Duration: c.Options.ReceiveBackoffBase, Factor: 2, Jitter: 0.1,
		Steps: math.MaxInt32, Cap: c.Options.ReceiveBackoffMax,
	}
}

// sleep waits for d, or less if ctx ends first; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

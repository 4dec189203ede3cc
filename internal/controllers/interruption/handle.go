package interruption

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/interruption"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// Label values of the interruption metrics.
const (
	kindMalformed = "malformed"
	kindForeign   = "foreign"

	actionMarked    = "marked"
	actionCordoned  = "cordoned"
	actionIgnored   = "ignored"
	actionRecheck   = "recheck"
	actionUnmatched = "unmatched"

	errorMalformed = "malformed"
	errorForeign   = "foreign"
	errorReceive   = "receive"
	errorDelete    = "delete"
	errorHandle    = "handle"
)

// handleAll handles one receive's messages and deletes those done with: handled, or
// never to be understood. A message whose handling failed stays, and comes again once
// the queue's visibility timeout passes; handling is idempotent, so a message deleted
// too late or handled twice does no harm.
func (c *Controller) handleAll(ctx context.Context, msgs []cloudprovider.QueueMessage) {
	var done []cloudprovider.QueueMessage
	for _, msg := range msgs {
		if c.handle(ctx, msg) {
			done = append(done, msg)
		}
	}
	if len(done) == 0 {
		return
	}
	if err := c.Queue.Delete(ctx, done); err != nil {
		metrics.InterruptionMessageErrors.WithLabelValues(errorDelete).Inc()
		log.FromContext(ctx).Error(err, "Deleting handled notices failed; they come again and are handled again", "messages", len(done))
	}
}

// handle acts on one message and reports whether it is done with.
func (c *Controller) handle(ctx context.Context, msg cloudprovider.QueueMessage) (done bool) {
	logger := log.FromContext(ctx).WithValues("message", msg.ID)
	notice, err := interruption.Parse(msg.Body)
	switch {
	case errors.Is(err, interruption.ErrForeign):
		metrics.InterruptionMessagesReceived.WithLabelValues(kindForeign).Inc()
		metrics.InterruptionMessageErrors.WithLabelValues(errorForeign).Inc()
		logger.V(1).Info("Deleting a notice Stratos does not read", "why", err.Error())
		return true
	case err != nil:
		metrics.InterruptionMessagesReceived.WithLabelValues(kindMalformed).Inc()
		metrics.InterruptionMessageErrors.WithLabelValues(errorMalformed).Inc()
		logger.Info("Deleting a notice that cannot be read", "why", err.Error())
		return true
	}
	kind := string(notice.Kind)
	metrics.InterruptionMessagesReceived.WithLabelValues(kind).Inc()
	ctx = log.IntoContext(ctx, logger.WithValues("notice", notice.ID, "kind", kind))
	matched := false
	for _, id := range notice.InstanceIDs {
		claims, err := c.claimsOf(ctx, id)
		if err != nil {
			return c.failed(ctx, id, err)
		}
		if len(claims) == 0 {
			metrics.InterruptionMessagesHandled.WithLabelValues(kind, actionUnmatched).Inc()
			log.FromContext(ctx).V(1).Info("No claim has the instance; not the cluster's", "instance", id)
			continue
		}
		matched = true
		for i := range claims {
			if err := c.act(ctx, notice, &claims[i]); err != nil {
				return c.failed(ctx, id, err)
			}
		}
	}
	if matched {
		metrics.InterruptionNoticeLatency.Observe(max(c.Clock.Since(notice.Time).Seconds(), 0))
	}
	return true
}

// failed counts a notice whose handling failed, which is left in the queue to come again.
func (c *Controller) failed(ctx context.Context, instanceID string, err error) bool {
	metrics.InterruptionMessageErrors.WithLabelValues(errorHandle).Inc()
	log.FromContext(ctx).Error(err, "Handling a notice failed; it comes again", "instance", instanceID)
	return false
}

// claimsOf returns the claims of an instance: one, or none when the instance is not the
// cluster's (the queue may serve other clusters, or instances Stratos does not own).
func (c *Controller) claimsOf(ctx context.Context, instanceID string) ([]v1beta1.NodeClaim, error) {
	list := &v1beta1.NodeClaimList{}
	if err := c.Client.List(ctx, list, client.MatchingFields{indexes.ClaimInstanceID: instanceID}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// act does what the notice asks of one claim.
func (c *Controller) act(ctx context.Context, notice interruption.Notice, claim *v1beta1.NodeClaim) error {
	switch notice.Kind {
	case interruption.SpotInterruption, interruption.ScheduledChange:
		return c.interrupted(ctx, notice, claim)
	case interruption.Rebalance:
		return c.rebalance(ctx, notice, claim)
	case interruption.StateChange:
		c.stateChanged(ctx, notice, claim)
	}
	return nil
}

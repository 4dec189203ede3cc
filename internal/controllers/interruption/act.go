package interruption

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/interruption"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// Event reasons of the interruption controller.
const (
	// ReasonInterrupted: the cloud takes the claim's instance away (a spot interruption
	// warning, a scheduled change); the Event names the deadline.
	ReasonInterrupted = "Interrupted"
	// ReasonRebalanceRecommendation: the cloud recommends moving off the instance; the
	// Event says whether the pool replaces the node or ignores the recommendation.
	ReasonRebalanceRecommendation = "RebalanceRecommendation"
	// ReasonUnavailableOffering is the reason an interrupted spot offering is marked
	// unavailable with, as stratos_cloudprovider_unavailable_offerings shows it.
	ReasonUnavailableOffering = "SpotInterruption"
)

// interrupted records a spot interruption or scheduled change on the claim, cordons its
// Node, marks a spot offering unavailable and wakes disruption. A notice recorded
// already (a message delivered again) changes nothing but the cordon, which is made
// sure of.
func (c *Controller) interrupted(ctx context.Context, notice interruption.Notice, claim *v1beta1.NodeClaim) error {
	kind := string(notice.Kind)
	record := interruptionOf(notice)
	message := deadlineMessage(notice, claim)
	recorded, err := c.record(ctx, claim, record, kind, message)
	if err != nil {
		return err
	}
	node, cordoned, err := c.cordon(ctx, claim)
	if err != nil {
		return err
	}
	if cordoned {
		metrics.InterruptionMessagesHandled.WithLabelValues(kind, actionCordoned).Inc()
	}
	if !recorded {
		metrics.InterruptionMessagesHandled.WithLabelValues(kind, actionIgnored).Inc()
		return nil
	}
	metrics.InterruptionMessagesHandled.WithLabelValues(kind, actionMarked).Inc()
	if notice.Kind == interruption.SpotInterruption && claim.Status.CapacityType == v1beta1.CapacityTypeSpot && claim.Status.InstanceType != "" && claim.Status.Zone != "" {
		c.Unavailable.Mark(cloudprovider.OfferingKey{InstanceType: claim.Status.InstanceType, Zone: claim.Status.Zone, CapacityType: v1beta1.CapacityTypeSpot}, ReasonUnavailableOffering)
	}
	if node != nil {
		c.Recorder.Eventf(claim, node, corev1.EventTypeWarning, ReasonInterrupted, "Interrupt", "%s", message)
		c.Recorder.Eventf(node, claim, corev1.EventTypeWarning, ReasonInterrupted, "Interrupt", "%s", message)
	} else {
		c.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, ReasonInterrupted, "Interrupt", "%s", message)
	}
	log.FromContext(ctx).Info("Claim interrupted", "nodeClaim", claim.Name, "deadline", record.Deadline)
	c.kick()
	return nil
}

// rebalance records a rebalance recommendation on a claim whose pool replaces such
// nodes, and otherwise only says that it is ignored. It never cordons: the node runs
// until its replacement does.
func (c *Controller) rebalance(ctx context.Context, notice interruption.Notice, claim *v1beta1.NodeClaim) error {
	kind := string(notice.Kind)
	policy, err := c.rebalancePolicy(ctx, claim)
	if err != nil {
		return err
	}
	if policy != v1beta1.RebalanceReplace {
		metrics.InterruptionMessagesHandled.WithLabelValues(kind, actionIgnored).Inc()
		c.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, ReasonRebalanceRecommendation, "Interrupt",
			"Rebalance recommended for instance %s, ignored: the pool's rebalanceRecommendation is %s", claim.Status.InstanceID, v1beta1.RebalanceIgnore)
		return nil
	}
	message := fmt.Sprintf("EC2 recommends moving off instance %s (at elevated risk of interruption); the pool replaces the node (rebalanceRecommendation %s)", claim.Status.InstanceID, v1beta1.RebalanceReplace)
	recorded, err := c.record(ctx, claim, interruptionOf(notice), ReasonRebalanceRecommendation, message)
	if err != nil {
		return err
	}
	if !recorded {
		metrics.InterruptionMessagesHandled.WithLabelValues(kind, actionIgnored).Inc()
		return nil
	}
	metrics.InterruptionMessagesHandled.WithLabelValues(kind, actionMarked).Inc()
	c.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, ReasonRebalanceRecommendation, "Interrupt", "%s", message)
	c.kick()
	return nil
}

// rebalancePolicy is the claim's pool's rebalanceRecommendation; a pool gone ignores.
func (c *Controller) rebalancePolicy(ctx context.Context, claim *v1beta1.NodeClaim) (v1beta1.RebalancePolicy, error) {
	pool := &v1beta1.NodePool{}
	if err := c.Client.Get(ctx, client.ObjectKey{Name: claim.Spec.NodePool}, pool); err != nil {
		if apierrors.IsNotFound(err) {
			return v1beta1.RebalanceIgnore, nil
		}
		return "", err
	}
	return pool.Spec.Disruption.RebalanceRecommendation, nil
}

// stateChanged asks the lifecycle controller to look at a claim whose instance is
// stopping or gone, so that an instance stopped or terminated from outside, or a stop
// of Stratos's own ending, is seen now rather than at the next poll or resync.
func (c *Controller) stateChanged(ctx context.Context, notice interruption.Notice, claim *v1beta1.NodeClaim) {
	kind := string(notice.Kind)
	switch notice.State {
	case "stopping", "stopped", "shutting-down", "terminated":
		c.Recheck.Ask(claim)
		metrics.InterruptionMessagesHandled.WithLabelValues(kind, actionRecheck).Inc()
		log.FromContext(ctx).V(1).Info("Asked the lifecycle controller to look at the claim", "nodeClaim", claim.Name, "state", notice.State)
	default:
		metrics.InterruptionMessagesHandled.WithLabelValues(kind, actionIgnored).Inc()
	}
}

// record writes the notice into the claim's status.interruption and its Interrupted
// condition, unless the claim holds a notice this one does not supersede. It reports
// whether it wrote. The patch carries an optimistic lock, as the lifecycle controller
// writes the conditions too; on a conflict the claim is read again.
func (c *Controller) record(ctx context.Context, claim *v1beta1.NodeClaim, notice v1beta1.Interruption, reason, message string) (recorded bool, err error) {
	first := true
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			if err := c.APIReader.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
				return err
			}
		}
		first = false
		recorded = false
		if !Supersedes(notice, claim.Status.Interruption) {
			return nil
		}
		updated := claim.DeepCopy()
		updated.Status.Interruption = &notice
		meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{
			Type: v1beta1.ConditionInterrupted, Status: metav1.ConditionTrue, Reason: reason, Message: message,
			ObservedGeneration: claim.Generation, LastTransitionTime: metav1.NewTime(c.Clock.Now()),
		})
		if err := c.Client.Status().Patch(ctx, updated, client.MergeFromWithOptions(claim, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		*claim, recorded = *updated, true
		return nil
	})
	if apierrors.IsNotFound(err) {
		// The claim is gone, and its instance with it: nothing is left to interrupt.
		return false, nil
	}
	return recorded, err
}

// cordon marks the claim's Node unschedulable, so that no pod lands on a node about to
// go; node is nil when the claim has none yet. cordoned reports whether it wrote. The
// Node is read from the API server, not the cache: a claim that has just come to run
// may still have its Node cached as it was while parked, cordoned, and a notice judged
// by that would leave the running Node open to pods. Notices are rare; the read is
// cheap. The patch carries an optimistic lock so that a change made since the read is
// read again rather than overwritten.
func (c *Controller) cordon(ctx context.Context, claim *v1beta1.NodeClaim) (node *corev1.Node, cordoned bool, err error) {
	if claim.Status.NodeName == "" {
		return nil, false, nil
	}
	node = &corev1.Node{}
	key := client.ObjectKey{Name: claim.Status.NodeName}
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := c.APIReader.Get(ctx, key, node); err != nil {
			return err
		}
		if node.Spec.Unschedulable {
			return nil
		}
		base := node.DeepCopy()
		node.Spec.Unschedulable = true
		if err := c.Client.Patch(ctx, node, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		cordoned = true
		return nil
	})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return node, cordoned, nil
}

func (c *Controller) kick() {
	if c.Kick != nil {
		c.Kick()
	}
}

// interruptionOf is the status.interruption a notice writes.
func interruptionOf(notice interruption.Notice) v1beta1.Interruption {
	out := v1beta1.Interruption{Kind: v1beta1.InterruptionKind(notice.Kind), NoticeTime: metav1.NewTime(notice.Time)}
	if !notice.Deadline.IsZero() {
		out.Deadline = ptr.To(metav1.NewTime(notice.Deadline))
	}
	return out
}

// deadlineMessage says what the notice means for the claim's instance, and by when.
func deadlineMessage(notice interruption.Notice, claim *v1beta1.NodeClaim) string {
	id := claim.Status.InstanceID
	switch {
	case notice.Kind == interruption.SpotInterruption:
		action := notice.Action
		if action == "" {
			action = "terminate"
		}
		return fmt.Sprintf("Spot interruption warning: EC2 will %s instance %s at %s; the node is cordoned and replaced, and drains before then",
			action, id, notice.Deadline.UTC().Format(time.RFC3339))
	case notice.Deadline.IsZero():
		return fmt.Sprintf("Scheduled change: AWS Health schedules maintenance of instance %s, with no start time given; the node is cordoned and replaced", id)
	default:
		return fmt.Sprintf("Scheduled change: AWS Health schedules maintenance of instance %s starting %s; the node is cordoned and replaced, and drains before then",
			id, notice.Deadline.UTC().Format(time.RFC3339))
	}
}

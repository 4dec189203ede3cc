package provisioning

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

// Reasons of a buffer's Provisioning condition.
const (
	// ReasonRoomKept: every virtual pod of the buffer has room.
	ReasonRoomKept = "RoomKept"
	// ReasonBufferNoPoolFits: some virtual pods fit no node, claim or pool.
	ReasonBufferNoPoolFits = "NoPoolFits"
	// ReasonLimitsReached: pools would take the pods but their limits allow no more.
	ReasonLimitsReached = "LimitsReached"
)

// Where a buffer's virtual pods have room, as the metric's placement label says.
const (
	placedRunning = "running"
	placedStandby = "standby"
	unplacedPods  = "unplaced"
)

// bufferOutcome is where a buffer's virtual pods went in this pass.
type bufferOutcome struct {
	wanted  int
	standby bool
	// counts by placement; pools the room is in ("" for Nodes of no pool).
	counts map[string]int
	pools  map[string]bool
	// standbyNodes, for a standby-capacity buffer, per pool.
	standbyNodes map[string]int32
	// reasons of the pods left without room, and whether limits alone refused them.
	reasons     []string
	limitsAlone bool
}

func (o *bufferOutcome) placed(pool, placement string) {
	if o.counts == nil {
		o.counts, o.pools = map[string]int{}, map[string]bool{}
	}
	o.counts[placement]++
	o.pools[pool] = true
}

func (o *bufferOutcome) unplaced(u scheduling.Unschedulable) {
	if o.counts == nil {
		o.counts, o.pools = map[string]int{}, map[string]bool{}
	}
	if o.counts[unplacedPods] == 0 {
		o.limitsAlone = true
	}
	o.counts[unplacedPods]++
	reason := unschedulableReason(u)
	if len(u.Reasons) == 0 || !allAboutLimits(u.Reasons) {
		o.limitsAlone = false
	}
	for _, r := range o.reasons {
		if r == reason {
			return
		}
	}
	o.reasons = append(o.reasons, reason)
}

// allAboutLimits says whether every pool refused the pod for its limits.
func allAboutLimits(reasons map[string]string) bool {
	for _, r := range reasons {
		if !strings.Contains(r, "limits.") {
			return false
		}
	}
	return true
}

// condition is the buffer's Provisioning condition for the outcome.
func (o *bufferOutcome) condition(generation int64) metav1.Condition {
	c := metav1.Condition{Type: autoscalingv1beta1.ConditionProvisioning, ObservedGeneration: generation}
	if n := o.counts[unplacedPods]; n > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, ReasonBufferNoPoolFits
		if o.limitsAlone {
			c.Reason = ReasonLimitsReached
		}
		sort.Strings(o.reasons)
		c.Message = fmt.Sprintf("%d of %d buffer pods have no room: %s", n, o.wanted, strings.Join(o.reasons, "; "))
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, ReasonRoomKept
	if o.standby {
		var parts []string
		for pool, n := range o.standbyNodes {
			parts = append(parts, fmt.Sprintf("%d standby nodes of NodePool %s", n, pool))
		}
		sort.Strings(parts)
		if len(parts) == 0 {
			c.Message = "The buffer has no pods to keep room for"
			return c
		}
		c.Message = fmt.Sprintf("Room for %d buffer pods kept on %s", o.wanted, strings.Join(parts, ", "))
		return c
	}
	var pools []string
	for pool := range o.pools {
		if pool == "" {
			pool = "Nodes of no NodePool"
		} else {
			pool = "NodePool " + pool
		}
		pools = append(pools, pool)
	}
	sort.Strings(pools)
	if len(pools) == 0 {
		c.Message = "The buffer has no pods to keep room for"
		return c
	}
	c.Message = fmt.Sprintf("Room for %d buffer pods kept on running nodes of %s", o.wanted, strings.Join(pools, ", "))
	return c
}

// reportBuffer writes the buffer's Provisioning condition when it changed, by a status
// patch of that one condition on the buffer as read, with an Event.
func (p *Provisioner) reportBuffer(ctx context.Context, b buffer, o *bufferOutcome) error {
	if o == nil {
		return nil
	}
	want := o.condition(b.obj.Generation)
	before := meta.FindStatusCondition(b.obj.Status.Conditions, want.Type)
	if same(before, want) {
		return nil
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current := &autoscalingv1beta1.CapacityBuffer{}
		if err := p.Client.Get(ctx, client.ObjectKeyFromObject(b.obj), current); err != nil {
			return err
		}
		if same(meta.FindStatusCondition(current.Status.Conditions, want.Type), want) {
			return nil
		}
		base := current.DeepCopy()
		meta.SetStatusCondition(&current.Status.Conditions, want)
		// The optimistic lock keeps the other writers' conditions: a merge patch writes
		// the whole list.
		return p.Client.Status().Patch(ctx, current, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if before != nil && before.Status == want.Status && before.Reason == want.Reason && before.Message == want.Message {
		return nil // only the generation observed moved on: nothing to tell
	}
	kind := corev1.EventTypeNormal
	if want.Status != metav1.ConditionTrue {
		kind = corev1.EventTypeWarning
	}
	p.Recorder.Eventf(b.obj, nil, kind, want.Reason, "Provision", "%s", want.Message)
	return nil
}

func same(c *metav1.Condition, want metav1.Condition) bool {
	return c != nil && c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message && c.ObservedGeneration == want.ObservedGeneration
}

// recordBufferMetrics sets each buffer's virtual pods by placement and forgets the
// buffers gone since the last pass.
func (p *Provisioner) recordBufferMetrics(outcomes map[string]*bufferOutcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key := range p.bufferMetrics {
		if _, ok := outcomes[key]; !ok {
			namespace, name, _ := strings.Cut(key, "/")
			metrics.ForgetCapacityBuffer(namespace, name)
		}
	}
	p.bufferMetrics = map[string]bool{}
	for key, o := range outcomes {
		namespace, name, _ := strings.Cut(key, "/")
		for _, placement := range []string{placedRunning, placedStandby, unplacedPods} {
			metrics.CapacityBufferPods.WithLabelValues(namespace, name, placement).Set(float64(o.counts[placement]))
		}
		p.bufferMetrics[key] = true
	}
}

package nodeclaim

import (
	"context"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/state"
)

// Reasons of drains.
const (
	ReasonDrained      = "Drained"
	ReasonDrainBlocked = "DrainBlocked"
	ReasonDrainForced  = "DrainForced"
)

// drainRetry is how long a drain that a PodDisruptionBudget blocks waits before it
// tries again; the eviction API answers 429 until the budget allows.
const drainRetry = 5 * time.Second

// drain evicts the pods that must leave node through the Eviction API, so that
// PodDisruptionBudgets are honoured; a budget that allows no disruption makes the
// eviction answer 429 and the drain tries again later. Once the pool's terminationGracePeriod has
// passed since started, or DeadlineForceMargin before an interruption's deadline, the
// pods left are deleted instead; an interrupted node's pods get a grace period that ends
// before the deadline. It reports whether the node is free of such pods, counting pods
// still terminating as there (but on an unhealthy Node that is not Ready, whose kubelet
// cannot finish them).
func (r *Lifecycle) drain(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node, started time.Time) (bool, ctrl.Result, error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.MatchingFields{indexes.PodNodeName: node.Name}); err != nil {
		return false, ctrl.Result{}, err
	}
	// untilForced is how long until the drain may delete what budgets protect.
	untilForced := time.Duration(math.MaxInt64)
	forcedBy := "the pool's terminationGracePeriod passed"
	if pool := r.poolOf(ctx, claim); pool != nil && pool.Spec.Template.Spec.TerminationGracePeriod != nil {
		untilForced = pool.Spec.Template.Spec.TerminationGracePeriod.Duration - r.since(started)
	}
	if untilDeadline := untilDeadlineForced(claim, r.Clock.Now()); untilDeadline < untilForced {
		untilForced, forcedBy = untilDeadline, "the instance's interruption deadline is near"
	}
	force := untilForced <= 0
	leaveTerminating := abandonsTerminating(claim, node)
	remaining, blocked, forced := 0, 0, 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !state.Workload(pod) || podutil.PrePull(pod, r.Options.PrePullNamespace) {
			continue
		}
		if !pod.DeletionTimestamp.IsZero() && leaveTerminating {
			continue
		}
		remaining++
		if !pod.DeletionTimestamp.IsZero() {
			if grace := hurriedGrace(claim, pod, r.Clock.Now()); grace != nil {
				if err := r.Client.Delete(ctx, pod, client.GracePeriodSeconds(*grace)); client.IgnoreNotFound(err) != nil {
					return false, ctrl.Result{}, fmt.Errorf("shortening the termination of pod %s/%s to the deadline: %w", pod.Namespace, pod.Name, err)
				}
			}
			continue // leaving already
		}
		err := r.evict(ctx, pod, force, deletionGrace(claim, pod, r.Clock.Now()))
		switch {
		case apierrors.IsTooManyRequests(err):
			blocked++
		case err != nil && !apierrors.IsNotFound(err):
			return false, ctrl.Result{}, fmt.Errorf("evicting pod %s/%s: %w", pod.Namespace, pod.Name, err)
		case err == nil && force:
			forced++
		}
	}
	if forced > 0 {
		log.FromContext(ctx).Info("Deleting the pods left on the node despite their PodDisruptionBudgets", "because", forcedBy, "pods", forced)
		r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, ReasonDrainForced, "Drain",
			"%s; deleted %d pods despite their PodDisruptionBudgets", forcedBy, forced)
	}
	if remaining == 0 {
		return true, ctrl.Result{}, nil
	}
	if blocked > 0 {
		r.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, ReasonDrainBlocked, "Drain",
			"%d pods wait for their PodDisruptionBudgets to allow an eviction", blocked)
		return false, ctrl.Result{RequeueAfter: max(min(drainRetry, untilForced), 10*time.Millisecond)}, nil
	}
	// Evicted pods wake the claim when they are gone.
	return false, r.requeueWithin(drainRetry), nil
}

// evict asks the Eviction API to remove pod, or deletes it outright when force is set,
// with the grace period given (nil: the pod's own).
func (r *Lifecycle) evict(ctx context.Context, pod *corev1.Pod, force bool, grace *int64) error {
	if force {
		log.FromContext(ctx).V(1).Info("Deleting the pod despite its budget", "pod", client.ObjectKeyFromObject(pod))
		return r.Client.Delete(ctx, pod, &client.DeleteOptions{GracePeriodSeconds: grace})
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
	if grace != nil {
		eviction.DeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: grace}
	}
	return r.Client.SubResource("eviction").Create(ctx, pod, eviction)
}

// poolOf returns the claim's pool, or nil when it is gone.
func (r *Lifecycle) poolOf(ctx context.Context, claim *v1beta1.NodeClaim) *v1beta1.NodePool {
	pool := &v1beta1.NodePool{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: claim.Spec.NodePool}, pool); err != nil {
		return nil
	}
	return pool
}

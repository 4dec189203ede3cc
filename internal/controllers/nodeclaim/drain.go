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
// passed since started, the pods left are deleted instead. It reports whether the node
// is free of such pods, counting pods still terminating as there.
func (r *Lifecycle) drain(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node, started time.Time) (bool, ctrl.Result, error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.MatchingFields{indexes.PodNodeName: node.Name}); err != nil {
		return false, ctrl.Result{}, err
	}
	// untilForced is how long until the drain may delete what budgets protect.
	untilForced := time.Duration(math.MaxInt64)
	if pool := r.poolOf(ctx, claim); pool != nil && pool.Spec.Template.Spec.TerminationGracePeriod != nil {
		untilForced = pool.Spec.Template.Spec.TerminationGracePeriod.Duration - r.since(started)
	}
	force := untilForced <= 0
	remaining, blocked := 0, 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !state.Workload(pod) || podutil.PrePull(pod, r.Options.PrePullNamespace) {
			continue
		}
		remaining++
		if !pod.DeletionTimestamp.IsZero() {
			continue // leaving already
		}
		err := r.evict(ctx, pod, force)
		switch {
		case apierrors.IsTooManyRequests(err):
			blocked++
		case err != nil && !apierrors.IsNotFound(err):
			return false, ctrl.Result{}, fmt.Errorf("evicting pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
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

// evict asks the Eviction API to remove pod, or deletes it outright when force is set.
func (r *Lifecycle) evict(ctx context.Context, pod *corev1.Pod, force bool) error {
	if force {
		log.FromContext(ctx).Info("The pool's terminationGracePeriod passed; deleting the pod despite its budget", "pod", client.ObjectKeyFromObject(pod))
		return r.Client.Delete(ctx, pod)
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
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

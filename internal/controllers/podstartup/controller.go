package podstartup

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// Reconciler observes the milestones of the pods Tracker holds. Like the other
// controllers it runs on the leader only, whose provisioning fills the Tracker.
type Reconciler struct {
	Client  client.Client
	Tracker *Tracker
}

// SetupWithManager watches pods, letting through only the events of tracked ones.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	tracked := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return r.Tracker.Tracked(client.ObjectKeyFromObject(obj), obj.GetUID())
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("podstartup").
		For(&corev1.Pod{}, builder.WithPredicates(tracked)).
		Complete(r)
}

// Reconcile observes each milestone the pod reached and was not observed at yet, by the
// path that served it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		if apierrors.IsNotFound(err) {
			r.Tracker.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	type reached struct {
		milestone Milestone
		seconds   float64
	}
	var due []reached
	for _, m := range r.Tracker.Waiting(req.NamespacedName, pod.UID) {
		if at, ok := ReachedAt(pod, m); ok {
			due = append(due, reached{m, max(at.Sub(pod.CreationTimestamp.Time).Seconds(), 0)})
		}
	}
	if len(due) == 0 {
		return ctrl.Result{}, nil
	}
	served, known, err := r.served(ctx, pod)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !known {
		// The Node went before the pod could be measured: its path cannot be told.
		r.Tracker.Forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	path := Classify(pod.CreationTimestamp.Time, served)
	for _, d := range due {
		metrics.PodStartupDuration.WithLabelValues(string(path), string(d.milestone)).Observe(d.seconds)
		r.Tracker.Observed(req.NamespacedName, pod.UID, d.milestone)
		log.FromContext(ctx).V(1).Info("Pod reached a milestone", "milestone", d.milestone, "path", path, "seconds", d.seconds, "node", pod.Spec.NodeName)
	}
	return ctrl.Result{}, nil
}

// served reads when the pod's Node registered and when the claim behind it last
// started from standby; known is false when the Node is gone.
func (r *Reconciler) served(ctx context.Context, pod *corev1.Pod) (Served, bool, error) {
	node := &corev1.Node{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return Served{}, false, nil
		}
		return Served{}, false, fmt.Errorf("reading the pod's Node: %w", err)
	}
	s := Served{NodeCreated: node.CreationTimestamp.Time}
	claims := &v1beta1.NodeClaimList{}
	if err := r.Client.List(ctx, claims, client.MatchingFields{indexes.ClaimNodeName: node.Name}); err != nil {
		return Served{}, false, fmt.Errorf("reading the Node's claim: %w", err)
	}
	for i := range claims.Items {
		started := meta.FindStatusCondition(claims.Items[i].Status.Conditions, v1beta1.ConditionStarted)
		if started != nil && started.Status == metav1.ConditionTrue && started.LastTransitionTime.After(s.LastStart) {
			s.LastStart = started.LastTransitionTime.Time
		}
	}
	return s, true, nil
}

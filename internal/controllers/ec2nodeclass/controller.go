// Package ec2nodeclass resolves EC2NodeClasses: their selectors become the images,
// subnets, security groups and instance profile in their status, with a Ready condition
// that says what does not resolve. It resolves on every spec change and again
// periodically, so that a new image behind an alias is seen (and the nodes on the old
// one drift), and removes the instance profile it made for a class once the class is
// deleted and no claim uses it.
package ec2nodeclass

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider/aws"
)

// The EC2NodeClass controller patches its finalizer and status.
// +kubebuilder:rbac:groups=stratos.sh,resources=ec2nodeclasses,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=stratos.sh,resources=ec2nodeclasses/status,verbs=patch
// +kubebuilder:rbac:groups=stratos.sh,resources=nodeclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Finalizer keeps a deleted EC2NodeClass whose instance profile Stratos made until the
// claims that use the class are gone and the profile is removed.
const Finalizer = v1beta1.Group + "/instance-profile"

// conflictRetry is how soon a pass runs again after its write lost a race.
const conflictRetry = 100 * time.Millisecond

// Resolver resolves EC2NodeClasses and removes the instance profiles it made for them
// (aws.Resolver).
type Resolver interface {
	Resolve(ctx context.Context, class *v1beta1.EC2NodeClass) aws.Resolution
	DeleteInstanceProfile(ctx context.Context, class string) error
	RetireInstanceProfiles(ctx context.Context, class string, keep func(name string) bool) ([]string, error)
	SweepInstanceProfiles(ctx context.Context, keep func(class string) bool) ([]string, error)
}

// Options tune the EC2NodeClass controller. Zero fields take the defaults.
type Options struct {
	// Refresh is how often a class that resolved is resolved again, so that a new image
	// behind an alias or a new subnet with the selected tags is seen. Defaults to 5m.
	Refresh time.Duration
	// RetryFailed is how soon a class that did not resolve is tried again, and a deleted
	// class checks again for the claims it waits on. Transient AWS errors back off on
	// their own instead. Defaults to 1m.
	RetryFailed time.Duration
	// SweepInterval is how often the instance profiles Stratos made are checked for one
	// no class refers to any more. Defaults to 1h.
	SweepInterval time.Duration
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.Refresh, 5*time.Minute)
	set(&o.RetryFailed, time.Minute)
	set(&o.SweepInterval, time.Hour)
	return o
}

// AWSReconciler is the EC2NodeClass controller.
type AWSReconciler struct {
	Client   client.Client
	Resolver Resolver
	Recorder events.EventRecorder
	Options  Options
}

// SetupWithManager watches EC2NodeClasses (their spec changes and deletion; the
// controller's own status writes do not bring a class back), and the deletion of claims
// that use a class being deleted; and runs the sweep of instance profiles.
func (r *AWSReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Options = r.Options.WithDefaults()
	if err := mgr.Add(&sweeper{r: r}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("ec2nodeclass").
		For(&v1beta1.EC2NodeClass{}, builder.WithPredicates(specOrDeletionChanged)).
		Watches(&v1beta1.NodeClaim{}, handler.Funcs{DeleteFunc: r.claimGone}).
		Complete(r)
}

// specOrDeletionChanged passes a class's creation, a change of its spec and the start
// of its deletion; not its status, which only this controller writes.
var specOrDeletionChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
			e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	},
}

// claimGone brings a class back when a claim that used it goes and the class may be
// waiting for it: a class being deleted, or one whose old instance profile the claim
// may have held (see retire). Other classes are not disturbed.
func (r *AWSReconciler) claimGone(ctx context.Context, e event.DeleteEvent, queue workqueue.TypedRateLimitingInterface[ctrl.Request]) {
	claim, ok := e.Object.(*v1beta1.NodeClaim)
	if !ok || claim.Spec.NodeClassRef.Kind != "EC2NodeClass" {
		return
	}
	class := &v1beta1.EC2NodeClass{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: claim.Spec.NodeClassRef.Name}, class); err != nil {
		return
	}
	if class.DeletionTimestamp.IsZero() && !mayHoldRetiredProfile(claim, class) {
		return
	}
	queue.Add(ctrl.Request{NamespacedName: client.ObjectKeyFromObject(class)})
}

// Reconcile resolves one class and writes what it resolved to its status.
func (r *AWSReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	class := &v1beta1.EC2NodeClass{}
	if err := r.Client.Get(ctx, req.NamespacedName, class); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !class.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, class)
	}
	if class.Spec.Role != "" && !controllerutil.ContainsFinalizer(class, Finalizer) {
		// Recorded before the profile is made, so that a crash between the two leaks
		// nothing.
		base := class.DeepCopy()
		controllerutil.AddFinalizer(class, Finalizer)
		if err := r.Client.Patch(ctx, class, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return requeueOnConflict(err)
		}
	}

	before := class.DeepCopy()
	res := r.Resolver.Resolve(ctx, class)
	apply(class, res)
	if err := r.writeStatus(ctx, before, class); err != nil {
		return requeueOnConflict(err)
	}
	if controllerutil.ContainsFinalizer(class, Finalizer) && res.Failure(aws.PartInstanceProfile) == nil {
		// A class that names a role, or named one once: its profiles of earlier roles go
		// once no claim holds them.
		r.retire(ctx, class)
	}
	if len(res.Failures) > 0 && transientOnly(res.Failures) {
		// The controller's backoff spaces the retries; the status says what was last good.
		return ctrl.Result{}, fmt.Errorf("resolving EC2NodeClass %s: %w", class.Name, errors.Join(failureErrors(res.Failures)...))
	}
	if len(res.Failures) > 0 {
		return ctrl.Result{RequeueAfter: r.Options.RetryFailed}, nil
	}
	return ctrl.Result{RequeueAfter: r.Options.Refresh}, nil
}

// writeStatus patches class's status when it differs from before's, and records the
// Events the change tells, once the change is written.
func (r *AWSReconciler) writeStatus(ctx context.Context, before, class *v1beta1.EC2NodeClass) error {
	if equality.Semantic.DeepEqual(before.Status, class.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, class, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	for _, e := range notices(&before.Status, &class.Status) {
		kind := corev1.EventTypeNormal
		if e.warning {
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(class, nil, kind, e.reason, "Resolve", "%s", e.note)
	}
	return nil
}

// finalize removes the instance profile Stratos made for a deleted class once no claim
// uses the class, as instances launched with the profile lose their credentials when
// it goes, and then lets the class go.
func (r *AWSReconciler) finalize(ctx context.Context, class *v1beta1.EC2NodeClass) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(class, Finalizer) {
		return ctrl.Result{}, nil
	}
	claims := &v1beta1.NodeClaimList{}
	if err := r.Client.List(ctx, claims); err != nil {
		return ctrl.Result{}, err
	}
	if using := claimsOf(claims.Items, class.Name); using > 0 {
		before := class.DeepCopy()
		meta.SetStatusCondition(&class.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse,
			Reason: ReasonDeleting, ObservedGeneration: class.Generation,
			Message: fmt.Sprintf("The class is deleted; its instance profile is removed once the %d NodeClaims that use it are gone", using)})
		if err := r.writeStatus(ctx, before, class); err != nil {
			return requeueOnConflict(err)
		}
		// Each claim's deletion brings the class back (claimGone); this is a safety net.
		return ctrl.Result{RequeueAfter: r.Options.RetryFailed}, nil
	}
	if err := r.Resolver.DeleteInstanceProfile(ctx, class.Name); err != nil {
		r.Recorder.Eventf(class, nil, corev1.EventTypeWarning, aws.ReasonInstanceProfileError, "Delete", "Removing the instance profile: %v", err)
		return ctrl.Result{}, err
	}
	base := class.DeepCopy()
	controllerutil.RemoveFinalizer(class, Finalizer)
	if err := r.Client.Patch(ctx, class, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return requeueOnConflict(client.IgnoreNotFound(err))
	}
	log.FromContext(ctx).Info("Removed the instance profile of a deleted EC2NodeClass", "ec2nodeclass", class.Name)
	return ctrl.Result{}, nil
}

// claimsOf counts the claims that launch, or launched, with the EC2NodeClass named class.
func claimsOf(claims []v1beta1.NodeClaim, class string) int {
	n := 0
	for i := range claims {
		if ref := claims[i].Spec.NodeClassRef; ref.Kind == "EC2NodeClass" && ref.Name == class {
			n++
		}
	}
	return n
}

// requeueOnConflict retries a pass soon when its write lost a race, and returns any
// other error for the controller's backoff.
func requeueOnConflict(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

func failureErrors(failures []*aws.Failure) []error {
	errs := make([]error, 0, len(failures))
	for _, f := range failures {
		errs = append(errs, f)
	}
	return errs
}

// Package clusterapinodeclass checks ClusterAPINodeClasses: that the Cluster and the
// templates a class names exist, and whether Stratos can power its machines off and on,
// with a Ready condition that says what does not resolve.
package clusterapinodeclass

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capicontract"
	"github.com/stratos-sh/stratos/internal/cloudprovider/clusterapi"
)

// The ClusterAPINodeClass controller patches the classes' status. What it reads of
// Cluster API (the Cluster, the CRDs' contract labels, the templates) is granted with the
// provider's role (internal/cloudprovider/clusterapi/rbac.go and the chart's template
// groups).
// +kubebuilder:rbac:groups=stratos.sh,resources=clusterapinodeclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=stratos.sh,resources=clusterapinodeclasses/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reasons of a ClusterAPINodeClass's Ready condition.
const (
	// ReasonClusterAPINotInstalled: the API server does not serve CAPI's Cluster kind.
	ReasonClusterAPINotInstalled = "ClusterAPINotInstalled"
	// ReasonClusterNotFound: the Cluster the class names does not exist.
	ReasonClusterNotFound = "ClusterNotFound"
	// ReasonTemplateKindUnknown: the API server serves no kind of a template's group
	// and kind (its provider is not installed, or the ref is misspelt).
	ReasonTemplateKindUnknown = "TemplateKindUnknown"
	// ReasonTemplateNotContractVersioned: a template kind's CRD names no version for
	// CAPI's v1beta2 contract, so the version to read it at is unknown.
	ReasonTemplateNotContractVersioned = "TemplateNotContractVersioned"
	// ReasonTemplateNotFound: a template the class names does not exist in the cluster's
	// namespace.
	ReasonTemplateNotFound = "TemplateNotFound"
	// ReasonNotPermitted: Stratos may not read the Cluster or a template (its role lacks
	// the template's group: the chart's clusterAPI values).
	ReasonNotPermitted = "NotPermitted"
	// ReasonInvalid: the class's spec cannot be used (the provider's check says why).
	ReasonInvalid = "Invalid"
)

// ClusterAPIReconciler is the ClusterAPINodeClass controller: it checks that the Cluster
// and every template a class names exist, and whether Stratos can power the class's
// infrastructure machines off and on (status.standby), and writes a Ready condition
// that says what does not resolve.
type ClusterAPIReconciler struct {
	Client client.Client
	// APIReader reads the Cluster and the templates from the API server: their kinds may
	// not be installed, or be of any group, and a cache would watch each kind cluster-wide
	// for a read now and then. The reads need get permission only.
	APIReader client.Reader
	// Resolver finds the version templates are read at (their CRDs' contract labels).
	Resolver capicontract.Resolver
	// Powers are the power interfaces Stratos knows, by infrastructure machine kind.
	Powers   clusterapi.Powers
	Recorder events.EventRecorder
	// Check, when set, is the provider's own check of a class's spec (its prices, its
	// capacities); an error makes the class not Ready with ReasonInvalid.
	Check   func(*v1beta1.ClusterAPINodeClass) error
	Options Options
}

// SetupWithManager watches the classes' spec changes. The Cluster and the templates are
// of kinds that may not be installed when Stratos starts (and the templates of any
// kind), so they are not watched: a class is checked again every Refresh, and every
// RetryFailed while it does not resolve.
func (r *ClusterAPIReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Options = r.Options.WithDefaults()
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterapinodeclass").
		For(&v1beta1.ClusterAPINodeClass{}, builder.WithPredicates(specOrDeletionChanged)).
		Complete(r)
}

// Reconcile checks one class and writes its status.
func (r *ClusterAPIReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	class := &v1beta1.ClusterAPINodeClass{}
	if err := r.Client.Get(ctx, req.NamespacedName, class); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !class.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // nothing of Stratos's own to clean up
	}
	before := class.DeepCopy()
	failure, err := r.resolve(ctx, class)
	if err != nil {
		// The API server failed, which says nothing about the class: the status stays
		// as it was, and the controller's backoff spaces the retries.
		return ctrl.Result{}, fmt.Errorf("checking ClusterAPINodeClass %s: %w", class.Name, err)
	}
	class.Status.ObservedGeneration = class.Generation
	class.Status.Standby = standbyOf(class, r.Powers)
	ready := metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonResolved,
		Message: resolvedMessage(class), ObservedGeneration: class.Generation}
	if failure != nil {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, failure.reason, failure.message
	}
	meta.SetStatusCondition(&class.Status.Conditions, ready)
	if err := r.writeStatus(ctx, before, class); err != nil {
		return requeueOnConflict(err)
	}
	if failure != nil {
		return ctrl.Result{RequeueAfter: r.Options.RetryFailed}, nil
	}
	return ctrl.Result{RequeueAfter: r.Options.Refresh}, nil
}

// failure is why a class does not resolve.
type failure struct{ reason, message string }

// resolve checks the class's spec, Cluster and templates, and returns the first that
// fails; err is an error of the API server's, which says nothing of the class.
func (r *ClusterAPIReconciler) resolve(ctx context.Context, class *v1beta1.ClusterAPINodeClass) (*failure, error) {
	if r.Check != nil {
		if err := r.Check(class); err != nil {
			return &failure{ReasonInvalid, err.Error()}, nil
		}
	}
	ref := class.Spec.Cluster
	if f, err := r.checkCluster(ctx, ref); f != nil || err != nil {
		return f, err
	}
	for _, t := range templatesOf(class) {
		if f, err := r.checkTemplate(ctx, ref.Namespace, t); f != nil || err != nil {
			return f, err
		}
	}
	return nil, nil
}

// writeStatus patches class's status when it differs from before's, and records an
// Event when the class stops resolving (or fails for another reason than before), and
// when it resolves again.
func (r *ClusterAPIReconciler) writeStatus(ctx context.Context, before, class *v1beta1.ClusterAPINodeClass) error {
	if equality.Semantic.DeepEqual(before.Status, class.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, class, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	was := meta.FindStatusCondition(before.Status.Conditions, v1beta1.ConditionReady)
	now := meta.FindStatusCondition(class.Status.Conditions, v1beta1.ConditionReady)
	switch {
	case now.Status != metav1.ConditionTrue && (was == nil || was.Status != now.Status || was.Reason != now.Reason):
		r.Recorder.Eventf(class, nil, corev1.EventTypeWarning, now.Reason, "Resolve", "%s", now.Message)
	case now.Status == metav1.ConditionTrue && (was == nil || was.Status != metav1.ConditionTrue):
		r.Recorder.Eventf(class, nil, corev1.EventTypeNormal, ReasonResolved, "Resolve", "%s", now.Message)
	}
	return nil
}

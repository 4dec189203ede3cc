// Package capacitybuffer resolves CapacityBuffers (autoscaling.x-k8s.io/v1beta1) of the
// strategies Stratos serves into their status, as Cluster Autoscaler's buffer controller
// does, so that Cluster Autoscaler, Karpenter and Stratos read the same status: the
// PodTemplate of a chunk (the spec's, or one made from the scalableRef's pod template),
// the number of chunks (replicas, a percentage of the workload, the limits), the
// strategy, and the conditions ReadyForProvisioning and LimitedByQuotas. Provisioning
// keeps the room and owns the Provisioning condition, which this controller never
// touches. Buffers of other strategies belong to another autoscaler and are left alone.
package capacitybuffer

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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/internal/capacitybuffer"
)

// The buffer controller reads buffers and writes their status; makes the PodTemplates of
// buffers of workloads (owned by the buffer, blockOwnerDeletion set, hence the
// finalizers rule); reads the apps workloads buffers name.
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments;replicasets;statefulsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reasons of the conditions this controller writes.
const (
	// ReasonResolved: the buffer's template and replicas are in its status.
	ReasonResolved = "Resolved"
	// ReasonPodTemplateNotFound: spec.podTemplateRef names no PodTemplate.
	ReasonPodTemplateNotFound = "PodTemplateNotFound"
	// ReasonPodTemplateConflict: the PodTemplate Stratos would make for a buffer of a
	// workload exists and belongs to something else.
	ReasonPodTemplateConflict = "PodTemplateConflict"
	// ReasonScalableNotFound: spec.scalableRef names no workload.
	ReasonScalableNotFound = "ScalableNotFound"
	// ReasonScalableKindUnsupported: the workload's kind is not served, has no pod
	// template, or Stratos may not read it.
	ReasonScalableKindUnsupported = "ScalableKindUnsupported"
	// ReasonTemplateInvalid: the pod template makes no pod (no containers, say).
	ReasonTemplateInvalid = "TemplateInvalid"
	// ReasonLimitsTooSmall: the limits leave room for no chunk.
	ReasonLimitsTooSmall = "LimitsTooSmall"
	// ReasonReplicasUnbounded: the buffer sets neither replicas nor percentage, and its
	// limits do not bound a chunk's requests.
	ReasonReplicasUnbounded = "ReplicasUnbounded"
	// ReasonLimitedByQuotas: the limits cut the chunks (LimitedByQuotas True).
	ReasonLimitedByQuotas = "LimitedByQuotas"
	// ReasonWithinLimits: the limits do not cut the chunks (LimitedByQuotas False).
	ReasonWithinLimits = "WithinLimits"
)

const (
	// conflictRetry is how soon a pass runs again after its write lost a race.
	conflictRetry = 100 * time.Millisecond
	// unwatchedRefresh is how often a buffer of a workload of a kind the controller does
	// not watch is looked at again, to follow the workload's replicas and template.
	unwatchedRefresh = 5 * time.Minute
)

// Reconciler is the CapacityBuffer controller.
type Reconciler struct {
	// Client reads buffers and PodTemplates from the cache and writes.
	Client client.Client
	// APIReader reads workloads, which the controller watches by metadata only.
	APIReader client.Reader
	// Mapper finds the workload kinds the cluster serves.
	Mapper   meta.RESTMapper
	Recorder events.EventRecorder
}

// SetupWithManager indexes buffers by the PodTemplate and the workload they name, and
// watches buffers (their spec: the controller's own status writes and Provisioning's do
// not bring a buffer back), PodTemplates, and the metadata of the apps workloads
// (a change of their spec, such as a scale, changes their generation).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := registerIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("capacitybuffer").
		For(&autoscalingv1beta1.CapacityBuffer{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.PodTemplate{}, handler.EnqueueRequestsFromMapFunc(r.buffersOfTemplate))
	for kind, obj := range watchedKinds {
		b = b.WatchesMetadata(obj, handler.EnqueueRequestsFromMapFunc(r.buffersOfWorkload(kind)),
			builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	return b.Complete(r)
}

// Reconcile resolves one buffer into its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	buffer := &autoscalingv1beta1.CapacityBuffer{}
	if err := r.Client.Get(ctx, req.NamespacedName, buffer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !capacitybuffer.Served(buffer) || !buffer.DeletionTimestamp.IsZero() {
		// Another autoscaler's buffer, or one going: nothing of Stratos's to write.
		return ctrl.Result{}, nil
	}
	before := buffer.DeepCopy()
	unwatched, err := r.resolve(ctx, buffer)
	var why *failure
	if err != nil && !errors.As(err, &why) {
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if why != nil {
		notReady(buffer, why)
		unwatched = why.unwatched
	}
	buffer.Status.ProvisioningStrategy = ptr.To(capacitybuffer.Strategy(buffer))
	if err := r.writeStatus(ctx, before, buffer); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if unwatched {
		return ctrl.Result{RequeueAfter: unwatchedRefresh}, nil
	}
	return ctrl.Result{}, nil
}

// resolve sets buffer's status from its template and the number of chunks. A *failure
// says why the buffer does not resolve; any other error is retried. unwatched says that
// no watch follows the buffer's workload.
func (r *Reconciler) resolve(ctx context.Context, buffer *autoscalingv1beta1.CapacityBuffer) (unwatched bool, err error) {
	var template *corev1.PodTemplate
	src := &source{}
	switch {
	case buffer.Spec.PodTemplateRef != nil:
		template = &corev1.PodTemplate{}
		key := client.ObjectKey{Namespace: buffer.Namespace, Name: buffer.Spec.PodTemplateRef.Name}
		if err := r.Client.Get(ctx, key, template); err != nil {
			if apierrors.IsNotFound(err) {
				return false, &failure{reason: ReasonPodTemplateNotFound, message: fmt.Sprintf("PodTemplate %s does not exist", key.Name)}
			}
			return false, err
		}
		src.template = &template.Template
		if err := checkTemplate(src.template, "PodTemplate "+key.Name); err != nil {
			return false, err
		}
	case buffer.Spec.ScalableRef != nil:
		if src, err = r.readWorkload(ctx, buffer.Namespace, buffer.Spec.ScalableRef); err != nil {
			return false, err
		}
		ref := buffer.Spec.ScalableRef
		if err := checkTemplate(src.template, qualifiedKind(scalableGroup(ref), ref.Kind)+" "+ref.Name); err != nil {
			return src.unwatched, err
		}
		if template, err = r.ensureTemplate(ctx, buffer, src.template); err != nil {
			return src.unwatched, err
		}
	default:
		// The CRD's rules refuse this; a CRD of another version may not.
		return false, &failure{reason: ReasonTemplateInvalid, message: "The buffer names neither a podTemplateRef nor a scalableRef"}
	}

	chunks := countChunks(&buffer.Spec, src.workloadReplicas, src.template)
	if chunks.unbounded {
		return src.unwatched, &failure{reason: ReasonReplicasUnbounded,
			message: fmt.Sprintf("The buffer sets neither replicas nor percentage, and its limits (%s) bound none of the resources a chunk requests", describeLimits(buffer.Spec.Limits))}
	}
	st := &buffer.Status
	st.PodTemplateRef = &autoscalingv1beta1.LocalObjectRef{Name: template.Name}
	st.PodTemplateGeneration = ptr.To(template.Generation)
	st.Replicas = ptr.To(chunks.replicas)
	limited := metav1.Condition{Type: autoscalingv1beta1.ConditionLimitedByQuotas, Status: metav1.ConditionFalse,
		Reason: ReasonWithinLimits, Message: "The limits do not cut the buffer", ObservedGeneration: buffer.Generation}
	if chunks.limitedBy != "" {
		limited.Status, limited.Reason = metav1.ConditionTrue, ReasonLimitedByQuotas
		limited.Message = fmt.Sprintf("The limits cut the buffer from %d chunks to %d (%s)", chunks.wanted, chunks.replicas, chunks.limitedBy)
	}
	meta.SetStatusCondition(&st.Conditions, limited)
	if chunks.replicas == 0 && chunks.limitedBy != "" {
		return src.unwatched, &failure{reason: ReasonLimitsTooSmall,
			message: fmt.Sprintf("The limits (%s) leave room for no chunk of PodTemplate %s (%s)", describeLimits(buffer.Spec.Limits), template.Name, chunks.limitedBy)}
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: autoscalingv1beta1.ConditionReadyForProvisioning, Status: metav1.ConditionTrue,
		Reason: ReasonResolved, ObservedGeneration: buffer.Generation,
		Message: fmt.Sprintf("%d chunks of PodTemplate %s (generation %d)", chunks.replicas, template.Name, template.Generation)})
	return src.unwatched, nil
}

// notReady marks buffer's ReadyForProvisioning False with why. The rest of the status
// stays as it was: readers heed the condition (capacitybuffer.Resolved).
func notReady(buffer *autoscalingv1beta1.CapacityBuffer, why *failure) {
	meta.SetStatusCondition(&buffer.Status.Conditions, metav1.Condition{Type: autoscalingv1beta1.ConditionReadyForProvisioning,
		Status: metav1.ConditionFalse, Reason: why.reason, Message: why.message, ObservedGeneration: buffer.Generation})
}

// writeStatus patches buffer's status when it differs from before's, and records the
// Events the change tells once it is written. The patch carries the resourceVersion it
// was computed from, so that it never overwrites a Provisioning condition written
// since: it fails with a conflict and the pass runs again.
func (r *Reconciler) writeStatus(ctx context.Context, before, buffer *autoscalingv1beta1.CapacityBuffer) error {
	if equality.Semantic.DeepEqual(before.Status, buffer.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, buffer, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	for _, n := range notices(&before.Status, &buffer.Status) {
		kind := corev1.EventTypeNormal
		if n.warning {
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(buffer, nil, kind, n.reason, "Resolve", "%s", n.note)
	}
	return nil
}

// notice is an Event to record about a buffer after its status changed.
type notice struct {
	warning      bool
	reason, note string
}

// notices are what a status change tells users: a buffer that stops resolving, or fails
// for another reason than before, gets a Warning with the reason; one that resolves
// again, or for the first time, a Normal Resolved; limits that start to cut it a Warning
// LimitedByQuotas. A status that stays as it was tells nothing.
func notices(before, after *autoscalingv1beta1.CapacityBufferStatus) []notice {
	var out []notice
	was := meta.FindStatusCondition(before.Conditions, autoscalingv1beta1.ConditionReadyForProvisioning)
	now := meta.FindStatusCondition(after.Conditions, autoscalingv1beta1.ConditionReadyForProvisioning)
	switch {
	case now == nil:
	case now.Status != metav1.ConditionTrue:
		if was == nil || was.Status != now.Status || was.Reason != now.Reason {
			out = append(out, notice{warning: true, reason: now.Reason, note: now.Message})
		}
	case was == nil || was.Status != metav1.ConditionTrue:
		out = append(out, notice{reason: ReasonResolved, note: now.Message})
	}
	wasLimited := meta.IsStatusConditionTrue(before.Conditions, autoscalingv1beta1.ConditionLimitedByQuotas)
	if limited := meta.FindStatusCondition(after.Conditions, autoscalingv1beta1.ConditionLimitedByQuotas); limited != nil &&
		limited.Status == metav1.ConditionTrue && !wasLimited {
		out = append(out, notice{warning: true, reason: ReasonLimitedByQuotas, note: limited.Message})
	}
	return out
}

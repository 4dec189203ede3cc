// Package nodeclaim holds the NodeClaim lifecycle controller, the only code that calls
// the cloud for an instance, and garbage collection. Other controllers express intent on
// claims (create one, delete one, write spec.desiredState); this package turns intent
// into launches, starts, stops and terminations, and keeps each claim's phase, conditions
// and Node in step with what the cloud and the kubelet report.
package nodeclaim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Finalizer keeps a deleted claim until its instance is terminated and its Node deleted.
const Finalizer = v1beta1.TerminationFinalizer

// maxStepsPerReconcile bounds how many phases one reconcile may walk through when each
// step's condition already holds, so a claim never spins.
const maxStepsPerReconcile = 8

// Lifecycle is the NodeClaim lifecycle controller.
type Lifecycle struct {
	Client client.Client
	// APIReader reads claims from the API server rather than the cache: a step taken on a
	// claim older than this controller's last write to it would redo a start or mistake
	// its own start for one made outside Stratos.
	APIReader client.Reader
	Cloud     cloudprovider.CloudProvider
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	Options   Options
	// Nominations are provisioning's: the pods placed on a claim get the room of its Node
	// first when it starts taking pods. Nil reserves nothing.
	Nominations Nominations
	// Recheck brings the claims garbage collection asks about; nil brings none.
	Recheck *Recheck

	// pauseNotes remembers, by claim UID, the pause and held action last told in an
	// Event, so that a claim waiting on a paused pool says so once.
	pauseNotes sync.Map
	// warmupNotes remembers, by claim UID, the warmup failure last told in a Warning
	// Event, so that a pull the kubelet keeps retrying is told once.
	warmupNotes sync.Map
	// forcedStops remembers, by claim UID, the claims whose stop timed out and was
	// forced, so that the stop is forced once, and said once.
	forcedStops sync.Map
	// launchBackoff spaces each claim's retries of a launch that fails and may succeed
	// unchanged; made at first use.
	launchBackoff     *launchBackoff
	launchBackoffOnce sync.Once
}

// launchRetries is the schedule of the retries of failing launches.
func (r *Lifecycle) launchRetries() *launchBackoff {
	r.launchBackoffOnce.Do(func() {
		opts := r.Options.WithDefaults()
		r.launchBackoff = newLaunchBackoff(opts.LaunchBackoffBase, opts.LaunchBackoffMax)
	})
	return r.launchBackoff
}

// SetupWithManager watches claims, the Nodes of claims (their deletion too), the pods
// leaving them, the pre-pull pods, pools resumed after a pause, and the claims garbage
// collection asks about.
func (r *Lifecycle) SetupWithManager(mgr ctrl.Manager) error {
	r.Options = r.Options.WithDefaults()
	b := ctrl.NewControllerManagedBy(mgr).
		Named("nodeclaim").
		For(&v1beta1.NodeClaim{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.nodeToClaim), builder.WithPredicates(nodeChanged)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.podToClaim), builder.WithPredicates(podLeaving)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(prePullToClaim), builder.WithPredicates(isPrePull(r.Options.PrePullNamespace))).
		Watches(&v1beta1.NodePool{}, handler.EnqueueRequestsFromMapFunc(r.poolToClaims), builder.WithPredicates(poolResumed)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Options.MaxConcurrentReconciles})
	if r.Recheck != nil {
		b = b.WatchesRawSource(r.Recheck.source())
	}
	return b.Complete(r)
}

// step is one phase's handler. It reports whether the claim moved on, so the next
// phase's handler can run in the same reconcile.
type step func(ctx context.Context, claim *v1beta1.NodeClaim) (moved bool, result ctrl.Result, err error)

// Reconcile moves one claim as far along its life as the cloud and its Node allow,
// judges its Node's health for node repair (judgeHealth), then writes its status once.
func (r *Lifecycle) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &v1beta1.NodeClaim{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, claim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !claim.DeletionTimestamp.IsZero() {
		r.launchRetries().forget(claim.UID)
		r.forcedStops.Delete(claim.UID)
		return r.terminate(ctx, claim)
	}
	if !controllerutil.ContainsFinalizer(claim, Finalizer) {
		base := claim.DeepCopy()
		controllerutil.AddFinalizer(claim, Finalizer)
		if err := r.Client.Patch(ctx, claim, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}

	if claim.Spec.DesiredState == v1beta1.DesiredTerminated && !drainsFirst(claim.Status.Phase) {
		return ctrl.Result{}, r.removeAsked(ctx, claim, ReasonTerminating, fmt.Sprintf("Asked to be terminated while %s; terminating the instance", claim.Status.Phase))
	}

	before := claim.DeepCopy()
	var result ctrl.Result
	next, err := r.recheck(ctx, claim)
	for steps := 0; next && err == nil && steps < maxStepsPerReconcile; steps++ {
		next, result, err = r.stepFor(claim.Status.Phase)(ctx, claim)
	}
	if err == nil {
		var due time.Duration
		if due, err = r.judgeHealth(ctx, claim); due > 0 && (result.RequeueAfter == 0 || due < result.RequeueAfter) {
			result.RequeueAfter = due
		}
	}
	if !equality.Semantic.DeepEqual(before.Status, claim.Status) {
		if patchErr := r.Client.Status().Patch(ctx, claim, client.MergeFrom(before)); patchErr != nil {
			return ctrl.Result{}, client.IgnoreNotFound(patchErr)
		}
	}
	return r.settle(ctx, claim, result, err)
}

// settle turns a step's reason to wait into a requeue, so that waiting is neither
// logged as a failure nor retried with backoff: an instance the cloud does not show yet
// is asked about again at the next poll; a step held by its paused pool waits for the
// pool's resumption, which wakes the claim, and the resync is only a safety net.
func (r *Lifecycle) settle(ctx context.Context, claim *v1beta1.NodeClaim, result ctrl.Result, err error) (ctrl.Result, error) {
	var held *heldError
	var lostErr *lostError
	var ended *endedAtLaunchError
	switch {
	case errors.As(err, &held):
		r.notePaused(claim, held)
		return ctrl.Result{RequeueAfter: r.Options.ResyncInterval}, nil
	case errors.Is(err, errNotVisibleYet):
		log.FromContext(ctx).V(1).Info("The cloud does not show the instance yet; asking again")
		return r.poll(), nil
	case errors.As(err, &lostErr):
		return r.requeueWithin(lostErr.wait), nil
	case errors.As(err, &ended):
		return r.requeueWithin(ended.wait), nil
	case errors.Is(err, cloudprovider.ErrNotOwned):
		// A start, stop or termination refused for an instance that is not the
		// cluster's: the next observation says so on the claim.
		log.FromContext(ctx).V(1).Info("The instance is not the cluster's; looking at it again", "error", err.Error())
		return r.poll(), nil
	}
	return result, err
}

// recheck asks the cloud about the claim's instance before its phase's step when
// garbage collection asked, or while the claim says its instance is lost, since the
// steps of some phases (Initializing, WarmingUp, Draining) do not ask. ok is false when
// the claim cannot go on now.
func (r *Lifecycle) recheck(ctx context.Context, claim *v1beta1.NodeClaim) (ok bool, err error) {
	asked := r.Recheck.take(claim.Name)
	if claim.Status.InstanceID == "" || (!asked && !lost(claim)) {
		return true, nil
	}
	_, _, ok, err = r.observe(ctx, claim)
	return ok, err
}

func (r *Lifecycle) stepFor(phase v1beta1.NodeClaimPhase) step {
	switch phase {
	case "", v1beta1.PhaseLaunching:
		return r.launch
	case v1beta1.PhaseRegistering:
		return r.register
	case v1beta1.PhaseInitializing:
		return r.keepsNode(r.initialize)
	case v1beta1.PhaseWarmingUp:
		return r.keepsNode(r.warmUp)
	case v1beta1.PhaseStopping:
		return r.stopping
	case v1beta1.PhaseStandby:
		return r.standby
	case v1beta1.PhaseStarting:
		return r.starting
	case v1beta1.PhaseRunning:
		return r.keepsNode(r.running)
	case v1beta1.PhaseDraining:
		return r.keepsNode(r.draining)
	default:
		return func(context.Context, *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
			return false, ctrl.Result{}, nil
		}
	}
}

// transition moves claim into phase: it shapes the claim's Node for the new phase
// first (so a crash in between redoes it), then records the phase, an Event and metrics.
func (r *Lifecycle) transition(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node, to v1beta1.NodeClaimPhase, reason, message string) error {
	if node != nil {
		// The pods provisioning placed on the claim get its room before any other pod.
		reserve := to == v1beta1.PhaseRunning && r.reserved(claim.Name)
		registering := claim.Status.Phase == v1beta1.PhaseRegistering
		again, err := r.registeredAgain(ctx, node, claim)
		if err != nil {
			return err
		}
		if again {
			// Someone deleted the Node while its instance was stopped, and the kubelet
			// registered it afresh at the start: it lacks what Stratos added the first time.
			registering = true
			r.Recorder.Eventf(claim, node, corev1.EventTypeNormal, ReasonNodeRegisteredAgain, "Adopt",
				"Node %s registered again after it was deleted; adopting it", node.Name)
		}
		var labels map[string]string
		if registering {
			if labels, err = r.instanceLabels(ctx, claim, node); err != nil {
				return err
			}
		}
		if err := r.patchNode(ctx, node, func(n *corev1.Node) bool {
			changed := addMissingLabels(n, labels)
			changed = shapeNode(n, claim, to, registering) || changed
			if reserve && !slices.ContainsFunc(n.Spec.Taints, isReservedTaint) {
				n.Spec.Taints, changed = append(n.Spec.Taints, reservedTaint(claim.Name)), true
			}
			return changed
		}); err != nil {
			return fmt.Errorf("preparing Node %s for %s: %w", node.Name, to, err)
		}
	}
	from := claim.Status.Phase
	now := r.Clock.Now()
	recordTransition(claim, from, to, now)
	claim.Status.Phase = to
	claim.Status.LastPhaseChangeTime = ptr.To(metav1.NewTime(now))
	r.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, reason, string(to), message)
	log.FromContext(ctx).V(1).Info("Phase changed", "from", from, "to", to, "reason", reason)
	return nil
}

// patchNode applies change to the Node and writes it if anything changed. A patch that
// changes the taints carries an optimistic lock, because a merge patch replaces the
// whole taint list and must not undo a taint someone else changed meanwhile; on a
// conflict it reads the Node again and reapplies the change. One that does not (a
// label, the cordon) merges key by key and carries none: the kubelet's heartbeats change
// the Node's version every few seconds, and a lock would make such a patch conflict
// and be written twice for nothing.
func (r *Lifecycle) patchNode(ctx context.Context, node *corev1.Node, change func(*corev1.Node) bool) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			if err := r.Client.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
				return err
			}
		}
		first = false
		updated := node.DeepCopy()
		if !change(updated) {
			return nil
		}
		patch := client.MergeFrom(node)
		if !equality.Semantic.DeepEqual(node.Spec.Taints, updated.Spec.Taints) {
			patch = client.MergeFromWithOptions(node, client.MergeFromWithOptimisticLock{})
		}
		if err := r.Client.Patch(ctx, updated, patch); err != nil {
			return err
		}
		*node = *updated
		return nil
	})
	return client.IgnoreNotFound(err)
}

// since is how long ago t was, by the controller's clock.
func (r *Lifecycle) since(t time.Time) time.Duration { return r.Clock.Since(t) }

// requeueWithin asks to be woken when left elapses, or at the next poll if sooner.
func (r *Lifecycle) requeueWithin(left time.Duration) ctrl.Result {
	return ctrl.Result{RequeueAfter: max(min(left, r.Options.ResyncInterval), 100*time.Millisecond)}
}

// poll asks to be woken at the next poll of the cloud.
func (r *Lifecycle) poll() ctrl.Result { return ctrl.Result{RequeueAfter: r.Options.PollInterval} }

// podLeaving passes only pod events that can end a drain: a pod marked for deletion or deleted.
var podLeaving = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return false },
	UpdateFunc:  func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() },
	DeleteFunc:  func(e event.DeleteEvent) bool { return true },
	GenericFunc: func(e event.GenericEvent) bool { return false },
}

package simprovider

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
)

// Finalizer holds a SimMachine until its instance is terminated.
const Finalizer = v1alpha1.Group + "/instance"

// Reasons of a SimMachine's Ready condition.
const (
	ReasonWaitingForBootstrapData = "WaitingForBootstrapData"
	ReasonInvalidBootstrapData    = "InvalidBootstrapData"
	ReasonInvalidSpec             = "InvalidSpec"
	ReasonLaunchFailed            = "LaunchFailed"
	ReasonPowerFailed             = "PowerFailed"
	ReasonInstancePending         = "InstancePending"
	ReasonInstanceRunning         = "InstanceRunning"
	ReasonInstanceStopping        = "InstanceStopping"
	ReasonPoweredOff              = "PoweredOff"
	ReasonInstanceTerminating     = "InstanceTerminating"
	// ReasonInstanceVanished: the cloud no longer knows the instance, or it was
	// terminated from outside; the machine will not come back, and is not relaunched.
	ReasonInstanceVanished = "InstanceVanished"
	ReasonDeleting         = "Deleting"
)

// machineReconciler runs each SimMachine's fake instance: launched once the Machine's
// bootstrap data is there, stopped and started as spec.online says, terminated when the
// SimMachine goes.
type machineReconciler struct {
	client   client.Client
	cloud    Cloud
	recorder events.EventRecorder
	opts     Options
}

func (r *machineReconciler) setup(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).Named("simmachine").
		// A scenario launches machines by the dozen; the fake cloud answers at once.
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		For(&v1alpha1.SimMachine{}).
		// The Machine's bootstrap data secret name is what a launch waits for.
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(infraMachineOf)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(ofCluster(r.client, func() client.ObjectList { return &v1alpha1.SimMachineList{} }))).
		Complete(r)
}

// infraMachineOf maps a CAPI Machine to its SimMachine, if its infrastructure is one.
func infraMachineOf(_ context.Context, obj client.Object) []reconcile.Request {
	machine, ok := obj.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	ref := machine.Spec.InfrastructureRef
	if ref.APIGroup != v1alpha1.Group || ref.Kind != v1alpha1.KindSimMachine || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: machine.Namespace, Name: ref.Name}}}
}

func (r *machineReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	m := &v1alpha1.SimMachine{}
	if err := r.client.Get(ctx, req.NamespacedName, m); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() {
		return r.delete(ctx, m)
	}
	machine, err := ownerMachine(ctx, r.client, m)
	if err != nil {
		return reconcile.Result{}, err
	}
	if machine == nil {
		return reconcile.Result{}, r.patchStatus(ctx, m, m.DeepCopy(), metav1.ConditionFalse, ReasonWaitingForMachine, "waiting for a Machine to own the SimMachine")
	}
	isPaused, err := paused(ctx, r.client, m, machine.Spec.ClusterName)
	if err == nil {
		err = reportPaused(ctx, r.client, m, &m.Status.Conditions, isPaused)
	}
	if err != nil || isPaused {
		return reconcile.Result{}, err
	}
	if !controllerutil.ContainsFinalizer(m, Finalizer) {
		base := m.DeepCopy()
		controllerutil.AddFinalizer(m, Finalizer)
		if err := r.client.Patch(ctx, m, client.MergeFrom(base)); err != nil {
			return reconcile.Result{}, err
		}
	}
	if m.Status.InstanceID == "" {
		launched, result, err := r.launch(ctx, m, machine)
		if !launched {
			return result, err
		}
	}
	return r.follow(ctx, m)
}

// launch launches the SimMachine's instance and records it; it reports false, with what
// to return, when it did not.
func (r *machineReconciler) launch(ctx context.Context, m *v1alpha1.SimMachine, machine *clusterv1.Machine) (bool, reconcile.Result, error) {
	if machine.Spec.Bootstrap.DataSecretName == nil {
		return false, reconcile.Result{}, r.patchStatus(ctx, m, m.DeepCopy(), metav1.ConditionFalse, ReasonWaitingForBootstrapData, "waiting for the Machine's bootstrap data secret")
	}
	data, err := r.bootstrapData(ctx, m.Namespace, *machine.Spec.Bootstrap.DataSecretName)
	if apierrors.IsNotFound(err) {
		// The cache may not have the Secret yet; look again soon.
		return false, reconcile.Result{RequeueAfter: r.pollAfter()}, nil
	}
	if err != nil {
		return false, reconcile.Result{}, r.refuse(ctx, m, ReasonInvalidBootstrapData, err)
	}
	request, err := launchRequest(m, machine, data, r.opts.ClusterName)
	if err != nil {
		return false, reconcile.Result{}, r.refuse(ctx, m, ReasonInvalidSpec, err)
	}
	instance, err := r.cloud.Create(ctx, request)
	if err != nil {
		// Capacity and quota come back; the client token keeps retries to one launch.
		r.recorder.Eventf(m, nil, corev1.EventTypeWarning, ReasonLaunchFailed, "Launch", "%v", err)
		return false, reconcile.Result{RequeueAfter: r.opts.scaled(10 * r.opts.PollInterval)},
			r.patchStatus(ctx, m, m.DeepCopy(), metav1.ConditionFalse, ReasonLaunchFailed, err.Error())
	}
	r.recorder.Eventf(m, nil, corev1.EventTypeNormal, "Launched", "Launch", "launched instance %s (%s in %s)", instance.ID, instance.Type, instance.Zone)
	// The provider ID first: a lost status write is recovered by the client token, and
	// the provider ID names the instance either way.
	if m.Spec.ProviderID != instance.ProviderID {
		base := m.DeepCopy()
		m.Spec.ProviderID = instance.ProviderID
		if err := r.client.Patch(ctx, m, client.MergeFrom(base)); err != nil {
			return false, reconcile.Result{}, err
		}
	}
	updated := m.DeepCopy()
	updated.Status.InstanceID = instance.ID
	updated.Status.InstanceState = string(instance.State)
	updated.Status.FailureDomain = instance.Zone
	if err := r.patchStatus(ctx, m, updated, metav1.ConditionFalse, ReasonInstancePending, "instance "+instance.ID+" is launching"); err != nil {
		return false, reconcile.Result{}, err
	}
	m.Status = updated.Status
	return true, reconcile.Result{}, nil
}

// bootstrapData reads the Machine's bootstrap data Secret.
func (r *machineReconciler) bootstrapData(ctx context.Context, namespace, name string) (*BootstrapData, error) {
	secret := &corev1.Secret{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		return nil, err
	}
	value, ok := secret.Data[DataSecretKey]
	if !ok {
		return nil, fmt.Errorf("the bootstrap data secret %s has no %q key", name, DataSecretKey)
	}
	return DecodeBootstrapData(value)
}

// refuse reports input the machine cannot launch from: a condition and an Event, and no
// retry until the input changes.
func (r *machineReconciler) refuse(ctx context.Context, m *v1alpha1.SimMachine, reason string, err error) error {
	r.recorder.Eventf(m, nil, corev1.EventTypeWarning, reason, "Launch", "%v", err)
	return r.patchStatus(ctx, m, m.DeepCopy(), metav1.ConditionFalse, reason, err.Error())
}

// follow brings the instance to the power spec.online asks for and reports it.
func (r *machineReconciler) follow(ctx context.Context, m *v1alpha1.SimMachine) (reconcile.Result, error) {
	id := m.Status.InstanceID
	found, err := r.cloud.DescribeInstances(ctx, []string{id})
	if err != nil {
		return reconcile.Result{}, err
	}
	instance := found[id]
	updated := m.DeepCopy()
	if instance == nil || instance.State == cloudprovider.StateTerminated || instance.State == cloudprovider.StateShuttingDown {
		// Gone from outside: CAPI's health checks replace such a machine; it is not
		// relaunched under the same Machine.
		updated.Status.PoweredOn = false
		updated.Status.InstanceState = string(cloudprovider.StateTerminated)
		message := "the cloud no longer knows instance " + id
		if instance != nil {
			updated.Status.InstanceState = string(instance.State)
			message = fmt.Sprintf("instance %s was terminated from outside (%s)", id, instance.State)
		}
		if readyReason(m) != ReasonInstanceVanished {
			r.recorder.Eventf(m, nil, corev1.EventTypeWarning, ReasonInstanceVanished, "Observe", "%s", message)
		}
		return reconcile.Result{}, r.patchStatus(ctx, m, updated, metav1.ConditionFalse, ReasonInstanceVanished, message)
	}
	online := ptr.Deref(m.Spec.Online, true)
	if err := r.power(ctx, instance, online); err != nil {
		r.recorder.Eventf(m, nil, corev1.EventTypeWarning, ReasonPowerFailed, "Power", "%v", err)
		return reconcile.Result{RequeueAfter: r.pollAfter()},
			r.patchStatus(ctx, m, updated, metav1.ConditionFalse, ReasonPowerFailed, err.Error())
	}
	s := &updated.Status
	s.InstanceState = string(instance.State)
	s.PoweredOn = poweredOn(instance.State)
	s.FailureDomain = instance.Zone
	if instance.State == cloudprovider.StateRunning {
		// Provisioned stays true once reached: a machine switched off is still built.
		s.Initialization.Provisioned = ptr.To(true)
		s.Addresses = addressesOf(r.cloud, id)
	}
	status, reason, message := readiness(instance, online)
	if err := r.patchStatus(ctx, m, updated, status, reason, message); err != nil {
		return reconcile.Result{}, err
	}
	if settled(instance.State, online) {
		return reconcile.Result{RequeueAfter: r.opts.scaled(r.opts.ResyncInterval)}, nil
	}
	return reconcile.Result{RequeueAfter: r.pollAfter()}, nil
}

// power starts or stops the instance when its state is the opposite of the wish and
// not on the move; a move under way finishes first.
func (r *machineReconciler) power(ctx context.Context, instance *cloudprovider.Instance, online bool) error {
	var (
		errs map[string]error
		err  error
	)
	switch {
	case online && instance.State == cloudprovider.StateStopped:
		errs, err = r.cloud.StartInstances(ctx, []string{instance.ID})
	case !online && instance.State == cloudprovider.StateRunning:
		errs, err = r.cloud.StopInstances(ctx, []string{instance.ID}, false)
	default:
		return nil
	}
	if err == nil {
		err = errs[instance.ID]
	}
	if err != nil {
		return err
	}
	// Report the state the call moved the instance to.
	found, err := r.cloud.DescribeInstances(ctx, []string{instance.ID})
	if err == nil && found[instance.ID] != nil {
		*instance = *found[instance.ID]
	}
	return err
}

// poweredOn is the fact of a machine's power, as a BareMetalHost reports it: on while
// the instance runs and until a stop has ended; not yet on while it boots.
func poweredOn(state cloudprovider.InstanceState) bool {
	return state == cloudprovider.StateRunning || state == cloudprovider.StateStopping
}

// settled reports whether the instance rests in the state the wish asks for.
func settled(state cloudprovider.InstanceState, online bool) bool {
	if online {
		return state == cloudprovider.StateRunning
	}
	return state == cloudprovider.StateStopped
}

// readiness is the Ready condition of a machine whose instance is in a state.
func readiness(instance *cloudprovider.Instance, online bool) (metav1.ConditionStatus, string, string) {
	switch instance.State {
	case cloudprovider.StateRunning:
		if online {
			return metav1.ConditionTrue, ReasonInstanceRunning, "instance " + instance.ID + " is running"
		}
		return metav1.ConditionFalse, ReasonInstanceStopping, "instance " + instance.ID + " is running and will be stopped"
	case cloudprovider.StateStopping:
		return metav1.ConditionFalse, ReasonInstanceStopping, "instance " + instance.ID + " is stopping"
	case cloudprovider.StateStopped:
		return metav1.ConditionFalse, ReasonPoweredOff, "instance " + instance.ID + " is stopped"
	default:
		return metav1.ConditionFalse, ReasonInstancePending, "instance " + instance.ID + " is " + string(instance.State)
	}
}

// patchStatus patches updated's status, with its Ready condition set, over m's.
func (r *machineReconciler) patchStatus(ctx context.Context, m, updated *v1alpha1.SimMachine, status metav1.ConditionStatus, reason, message string) error {
	updated.Status.ObservedGeneration = m.Generation
	meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{
		Type: ConditionReady, Status: status, Reason: reason, Message: message, ObservedGeneration: m.Generation,
	})
	if equality.Semantic.DeepEqual(m.Status, updated.Status) {
		return nil
	}
	return r.client.Status().Patch(ctx, updated, client.MergeFrom(m))
}

// readyReason is the reason of m's Ready condition, empty without one.
func readyReason(m *v1alpha1.SimMachine) string {
	if c := meta.FindStatusCondition(m.Status.Conditions, ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// pollAfter is the real time to look again at an instance on the move.
func (r *machineReconciler) pollAfter() time.Duration { return r.opts.scaled(r.opts.PollInterval) }

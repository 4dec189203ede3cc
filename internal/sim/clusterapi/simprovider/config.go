package simprovider

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
)

// Reasons of a SimConfig's Ready condition.
const (
	ReasonDataSecretCreated    = "DataSecretCreated"
	ReasonWaitingForMachine    = "WaitingForMachine"
	ReasonInvalidConfiguration = "InvalidConfiguration"
)

// DataSecretKey is the key of a bootstrap data Secret that holds the data, as CAPI's
// contract has it.
const DataSecretKey = "value"

// configReconciler writes each SimConfig's bootstrap data into a Secret of the same
// name, once a CAPI Machine owns the SimConfig, as CAPI's BootstrapConfig contract asks.
type configReconciler struct {
	client   client.Client
	recorder events.EventRecorder
}

func (r *configReconciler) setup(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).Named("simconfig").
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		For(&v1alpha1.SimConfig{}).
		Owns(&corev1.Secret{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(ofCluster(r.client, func() client.ObjectList { return &v1alpha1.SimConfigList{} }))).
		Complete(r)
}

func (r *configReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	config := &v1alpha1.SimConfig{}
	if err := r.client.Get(ctx, req.NamespacedName, config); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !config.DeletionTimestamp.IsZero() {
		// The data Secret is owned by the config and goes with it.
		return reconcile.Result{}, nil
	}
	machine, err := ownerMachine(ctx, r.client, config)
	if err != nil {
		return reconcile.Result{}, err
	}
	if machine == nil {
		return reconcile.Result{}, r.setReady(ctx, config, metav1.ConditionFalse, ReasonWaitingForMachine, "waiting for a Machine to own the config")
	}
	isPaused, err := paused(ctx, r.client, config, machine.Spec.ClusterName)
	if err == nil {
		err = reportPaused(ctx, r.client, config, &config.Status.Conditions, isPaused)
	}
	if err != nil || isPaused {
		return reconcile.Result{}, err
	}
	if config.Status.DataSecretName != "" && ptr.Deref(config.Status.Initialization.DataSecretCreated, false) {
		// Bootstrap data is written once, as a kubeadm join configuration is: a Machine
		// that booted from it is not changed by a later edit.
		return reconcile.Result{}, nil
	}
	data, err := BootstrapDataFor(config.Spec)
	if err != nil {
		r.recorder.Eventf(config, nil, corev1.EventTypeWarning, ReasonInvalidConfiguration, "Bootstrap", "%v", err)
		return reconcile.Result{}, r.setReady(ctx, config, metav1.ConditionFalse, ReasonInvalidConfiguration, err.Error())
	}
	if err := r.writeSecret(ctx, config, machine.Spec.ClusterName, data); err != nil {
		return reconcile.Result{}, err
	}
	updated := config.DeepCopy()
	updated.Status.DataSecretName = config.Name
	updated.Status.Initialization.DataSecretCreated = ptr.To(true)
	return reconcile.Result{}, r.patchStatus(ctx, config, updated, metav1.ConditionTrue, ReasonDataSecretCreated, "the bootstrap data is in Secret "+config.Name)
}

// writeSecret creates the bootstrap data Secret: named as the config, owned by it, with
// CAPI's cluster label (which CAPI's caches select Secrets by).
func (r *configReconciler) writeSecret(ctx context.Context, config *v1alpha1.SimConfig, clusterName string, data *BootstrapData) error {
	value, err := data.Encode()
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: config.Namespace, Name: config.Name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{DataSecretKey: value},
	}
	if err := controllerutil.SetControllerReference(config, secret, r.client.Scheme()); err != nil {
		return err
	}
	err = r.client.Create(ctx, secret)
	if apierrors.IsAlreadyExists(err) {
		existing := &corev1.Secret{}
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(secret), existing); err != nil {
			return err
		}
		if !metav1.IsControlledBy(existing, config) {
			return fmt.Errorf("secret %s/%s exists and is not this SimConfig's", secret.Namespace, secret.Name)
		}
		return nil
	}
	return err
}

func (r *configReconciler) setReady(ctx context.Context, config *v1alpha1.SimConfig, status metav1.ConditionStatus, reason, message string) error {
	return r.patchStatus(ctx, config, config.DeepCopy(), status, reason, message)
}

// patchStatus patches updated's status, with its Ready condition set, over config's.
func (r *configReconciler) patchStatus(ctx context.Context, config, updated *v1alpha1.SimConfig, status metav1.ConditionStatus, reason, message string) error {
	updated.Status.ObservedGeneration = config.Generation
	meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{
		Type: ConditionReady, Status: status, Reason: reason, Message: message, ObservedGeneration: config.Generation,
	})
	if equality.Semantic.DeepEqual(config.Status, updated.Status) {
		return nil
	}
	return r.client.Status().Patch(ctx, updated, client.MergeFrom(config))
}

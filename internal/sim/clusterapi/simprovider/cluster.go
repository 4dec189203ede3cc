package simprovider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
)

// Condition types and reasons of the sim.stratos.sh kinds, in CAPI v1beta2's style.
const (
	ConditionReady     = clusterv1.ReadyCondition
	ConditionAvailable = clusterv1.AvailableCondition

	ReasonProvisioned = "Provisioned"
	ReasonInitialized = "Initialized"
	// ReasonUnknownZones: a SimCluster names zones the fake cloud does not have.
	ReasonUnknownZones = "UnknownZones"
)

// clusterReconciler provisions SimClusters: nothing is built, the cluster exists.
type clusterReconciler struct {
	client client.Client
	cloud  Cloud
}

func (r *clusterReconciler) setup(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).Named("simcluster").For(&v1alpha1.SimCluster{}).Complete(r)
}

func (r *clusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := &v1alpha1.SimCluster{}
	if err := r.client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	zones, err := r.zones(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	updated := cluster.DeepCopy()
	if unknown := missing(cluster.Spec.Zones, zones); len(unknown) > 0 {
		meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{
			Type: ConditionReady, Status: metav1.ConditionFalse, Reason: ReasonUnknownZones,
			Message: fmt.Sprintf("the fake cloud has no zone %s; it has %s", strings.Join(unknown, ", "), strings.Join(zones, ", ")), ObservedGeneration: cluster.Generation,
		})
		return reconcile.Result{}, r.patchIfChanged(ctx, cluster, updated)
	}
	if len(cluster.Spec.Zones) > 0 {
		zones = cluster.Spec.Zones
	}
	updated.Status.Initialization.Provisioned = ptr.To(true)
	updated.Status.FailureDomains = nil
	for _, zone := range zones {
		updated.Status.FailureDomains = append(updated.Status.FailureDomains, clusterv1.FailureDomain{Name: zone, ControlPlane: ptr.To(false)})
	}
	meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{
		Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonProvisioned,
		Message: "the simulated cluster's infrastructure is the fake cloud", ObservedGeneration: cluster.Generation,
	})
	return reconcile.Result{}, r.patchIfChanged(ctx, cluster, updated)
}

func (r *clusterReconciler) patchIfChanged(ctx context.Context, cluster, updated *v1alpha1.SimCluster) error {
	if equality.Semantic.DeepEqual(cluster.Status, updated.Status) {
		return nil
	}
	return r.client.Status().Patch(ctx, updated, client.MergeFrom(cluster))
}

// missing are the wanted zones the cloud does not have.
func missing(wanted, have []string) []string {
	var unknown []string
	for _, zone := range wanted {
		if !slices.Contains(have, zone) {
			unknown = append(unknown, zone)
		}
	}
	return unknown
}

// zones are the zones the fake cloud sells in, sorted.
func (r *clusterReconciler) zones(ctx context.Context) ([]string, error) {
	types, err := r.cloud.InstanceTypes(ctx, nil)
	if err != nil {
		return nil, err
	}
	var zones []string
	for _, t := range types {
		for _, o := range t.Offerings {
			zones = append(zones, o.Zone)
		}
	}
	slices.Sort(zones)
	return slices.Compact(zones), nil
}

// controlPlaneReconciler initializes SimControlPlanes: the control plane is the
// simulator's kube-apiserver, which runs already.
type controlPlaneReconciler struct {
	client client.Client
}

func (r *controlPlaneReconciler) setup(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).Named("simcontrolplane").For(&v1alpha1.SimControlPlane{}).Complete(r)
}

func (r *controlPlaneReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cp := &v1alpha1.SimControlPlane{}
	if err := r.client.Get(ctx, req.NamespacedName, cp); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cp.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	updated := cp.DeepCopy()
	s := &updated.Status
	s.Initialization.ControlPlaneInitialized = ptr.To(true)
	s.Version = cp.Spec.Version
	s.Versions = []clusterv1.StatusVersion{{Version: cp.Spec.Version}}
	s.ExternalManagedControlPlane = ptr.To(true)
	s.ObservedGeneration = cp.Generation
	for _, t := range []string{ConditionAvailable, ConditionReady} {
		meta.SetStatusCondition(&s.Conditions, metav1.Condition{
			Type: t, Status: metav1.ConditionTrue, Reason: ReasonInitialized,
			Message: "the control plane is the simulator's API server", ObservedGeneration: cp.Generation,
		})
	}
	if equality.Semantic.DeepEqual(cp.Status, updated.Status) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.client.Status().Patch(ctx, updated, client.MergeFrom(cp))
}

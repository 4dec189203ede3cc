package simprovider

import (
	"context"
	"path"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
)

// delete terminates a deleted SimMachine's instance and, once the cloud reports it
// terminated (or no longer knows it), lets the SimMachine go.
func (r *machineReconciler) delete(ctx context.Context, m *v1alpha1.SimMachine) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(m, Finalizer) {
		return reconcile.Result{}, nil
	}
	ids, err := r.instancesOf(ctx, m)
	if err != nil {
		return reconcile.Result{}, err
	}
	found, err := r.cloud.DescribeInstances(ctx, ids)
	if err != nil {
		return reconcile.Result{}, err
	}
	var alive []string
	for _, id := range ids {
		if instance := found[id]; instance != nil && instance.State != cloudprovider.StateTerminated {
			alive = append(alive, id)
		}
	}
	if len(alive) == 0 {
		base := m.DeepCopy()
		controllerutil.RemoveFinalizer(m, Finalizer)
		return reconcile.Result{}, client.IgnoreNotFound(r.client.Patch(ctx, m, client.MergeFrom(base)))
	}
	errs, err := r.cloud.TerminateInstances(ctx, alive)
	if err == nil {
		for _, id := range alive {
			if err = errs[id]; err != nil && cloudprovider.CodeOf(err) != cloudprovider.CodeNotFound {
				break
			}
			err = nil
		}
	}
	if err != nil {
		r.recorder.Eventf(m, nil, corev1.EventTypeWarning, "TerminateFailed", "Terminate", "%v", err)
		return reconcile.Result{RequeueAfter: r.pollAfter()}, nil
	}
	updated := m.DeepCopy()
	updated.Status.PoweredOn = false
	updated.Status.InstanceState = string(cloudprovider.StateShuttingDown)
	if err := r.patchStatus(ctx, m, updated, metav1.ConditionFalse, ReasonDeleting, "terminating instance "+alive[0]); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{RequeueAfter: r.pollAfter()}, nil
}

// instancesOf are the instances a SimMachine may have: the one it recorded, the one its
// provider ID names, and any the cloud lists under its UID (a launch whose record was
// lost).
func (r *machineReconciler) instancesOf(ctx context.Context, m *v1alpha1.SimMachine) ([]string, error) {
	var ids []string
	add := func(id string) {
		if id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	add(m.Status.InstanceID)
	if m.Spec.ProviderID != "" {
		// fake:///<zone>/<instance ID>
		add(path.Base(m.Spec.ProviderID))
	}
	listed, err := r.cloud.ListInstances(ctx, map[string]string{TagSimMachineUID: string(m.UID)})
	if err != nil {
		return nil, err
	}
	for _, instance := range listed {
		add(instance.ID)
	}
	return ids, nil
}

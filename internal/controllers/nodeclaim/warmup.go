package nodeclaim

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// Reasons of warmup.
const (
	ReasonWarmedUp      = "WarmedUp"
	ReasonWarmupTimeout = "WarmupTimeout"
	ReasonStarted       = "Started"
)

// defaultWarmup applies when the claim's pool is gone.
var defaultWarmup = v1alpha1.Warmup{TimeoutAction: v1alpha1.WarmupTimeoutTerminate}

// warmUp waits for the pool's images to be pulled, then stops the instance. Asked to run
// meanwhile, the node runs at once: it is initialised already.
func (r *Lifecycle) warmUp(ctx context.Context, claim *v1alpha1.NodeClaim) (bool, ctrl.Result, error) {
	node, err := r.nodeOf(ctx, claim)
	if err != nil || node == nil {
		return false, r.poll(), err
	}
	if claim.Spec.DesiredState == v1alpha1.DesiredRunning {
		return true, ctrl.Result{}, r.transition(ctx, claim, node, v1alpha1.PhaseRunning, ReasonStarted, "Asked to run while warming up; the Node takes pods")
	}
	warmup := r.warmupOf(ctx, claim)
	if missing := missingImages(node, warmup.Images); len(missing) > 0 {
		r.setCondition(claim, v1alpha1.ConditionWarmedUp, metav1.ConditionFalse, "PullingImages", "waiting for "+strings.Join(missing, ", "))
		return r.checkWarmupTimeout(ctx, claim, node)
	}
	r.setCondition(claim, v1alpha1.ConditionWarmedUp, metav1.ConditionTrue, ReasonWarmedUp, fmt.Sprintf("%d images pulled", len(warmup.Images)))
	return true, ctrl.Result{}, r.stop(ctx, claim, node, ReasonWarmedUp, "Warmed up; stopping the instance")
}

// checkWarmupTimeout applies the pool's warmup timeout to a claim meant for standby that
// is not warm yet: stop it anyway, or terminate it, as the pool says.
func (r *Lifecycle) checkWarmupTimeout(ctx context.Context, claim *v1alpha1.NodeClaim, node *corev1.Node) (bool, ctrl.Result, error) {
	warmup := r.warmupOf(ctx, claim)
	if claim.Spec.DesiredState != v1alpha1.DesiredStandby || warmup.Timeout == nil {
		return false, r.requeueWithin(r.Options.ResyncInterval), nil
	}
	if left := warmup.Timeout.Duration - r.since(claim.CreationTimestamp.Time); left > 0 {
		return false, r.requeueWithin(left), nil
	}
	if err := r.hold(ctx, claim, "the warmup timeout"); err != nil {
		return false, ctrl.Result{}, err
	}
	message := fmt.Sprintf("Warmup did not finish within %s", warmup.Timeout.Duration)
	r.setCondition(claim, v1alpha1.ConditionWarmedUp, metav1.ConditionFalse, ReasonWarmupTimeout, message)
	if warmup.TimeoutAction == v1alpha1.WarmupTimeoutStop {
		return true, ctrl.Result{}, r.stop(ctx, claim, node, ReasonWarmupTimeout, message+"; stopping the instance as it is")
	}
	return false, ctrl.Result{}, r.removeForTimeout(ctx, claim, ReasonWarmupTimeout, message+"; terminating the instance")
}

// warmupOf returns the warmup settings of the claim's pool.
func (r *Lifecycle) warmupOf(ctx context.Context, claim *v1alpha1.NodeClaim) v1alpha1.Warmup {
	if pool := r.poolOf(ctx, claim); pool != nil {
		return pool.Spec.Standby.Warmup
	}
	return defaultWarmup
}

package nodeclaim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Reasons of warmup.
const (
	ReasonWarmedUp      = "WarmedUp"
	ReasonWarmupTimeout = "WarmupTimeout"
	ReasonStarted       = "Started"
	// ReasonPullingImages: the pre-pull pod is on its way or its images are being pulled.
	ReasonPullingImages = "PullingImages"
	// ReasonImagesPulled is the Event of a pre-pull pod that pulled every image.
	ReasonImagesPulled = "ImagesPulled"
	// ReasonImagePullFailed: the kubelet fails to pull an image (it keeps retrying).
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonPrePullFailed: the API server refused the pre-pull pod (an admission policy,
	// a missing namespace), or the pod ended without pulling every image.
	ReasonPrePullFailed = "PrePullFailed"
)

// prePullRetry is how long a claim whose pre-pull pod the API server refused waits
// before it tries again, unless its warmup timeout comes sooner: what fixes it (a
// policy, a namespace) is outside Stratos, and its changes do not wake the claim.
const prePullRetry = 30 * time.Second

// defaultWarmup applies when the claim's pool is gone.
var defaultWarmup = v1beta1.Warmup{TimeoutAction: v1beta1.WarmupTimeoutTerminate}

// warmUp has the Node pull the pool's images through the pre-pull pod, then removes the
// pod and stops the instance. Asked to run meanwhile, the node runs at once: it is
// initialised already.
func (r *Lifecycle) warmUp(ctx context.Context, claim *v1beta1.NodeClaim) (bool, ctrl.Result, error) {
	node, err := r.nodeOf(ctx, claim)
	if err != nil || node == nil {
		return false, r.poll(), err
	}
	if claim.Spec.DesiredState == v1beta1.DesiredRunning {
		// Pods wait for this node: its pre-pull pod goes, but is not waited for, as it
		// asks for no room.
		if err := r.deletePrePull(ctx, claim, false); err != nil {
			return false, ctrl.Result{}, err
		}
		return true, ctrl.Result{}, r.transition(ctx, claim, node, v1beta1.PhaseRunning, ReasonStarted, "Asked to run while warming up; the Node takes pods")
	}
	warmup := r.warmupOf(ctx, claim)
	if len(warmup.Images) == 0 && !warmedUp(claim) {
		r.setCondition(claim, v1beta1.ConditionWarmedUp, metav1.ConditionTrue, ReasonWarmedUp, "The pool has no warmup images")
	}
	if warmedUp(claim) {
		return r.stopAfterPrePull(ctx, claim, node, "the stop", ReasonWarmedUp, "Warmed up; stopping the instance")
	}
	left, limited := r.warmupLeft(claim, warmup)
	if limited && left <= 0 {
		return r.timeOutWarmup(ctx, claim, node, warmup, r.notPulled(ctx, claim, warmup.Images))
	}
	wait := r.requeueWithin(r.Options.ResyncInterval)
	if limited {
		wait = r.requeueWithin(left)
	}
	pod, replacing, err := r.ensurePrePull(ctx, claim, node, warmup.Images)
	if replacing.RequeueAfter > 0 {
		wait.RequeueAfter = min(wait.RequeueAfter, replacing.RequeueAfter)
	}
	switch {
	case isRefused(err):
		r.failPrePull(claim, fmt.Sprintf("The API server refused pre-pull pod %s/%s: %v", r.Options.PrePullNamespace, prePullName(claim.Name), err))
		return false, r.requeueWithin(min(prePullRetry, wait.RequeueAfter)), nil
	case err != nil:
		return false, ctrl.Result{}, err
	case pod == nil:
		// Created or being replaced, its changes wake the claim. Until then it is a pod
		// that has pulled nothing, and says so in the words it will use at first, so
		// that its first sight costs no status write.
		pod = prePullPod(claim, r.Options.PrePullNamespace, node.Name, warmup.Images)
	}
	progress := progressOf(pod)
	switch {
	case progress.complete():
		message := progress.pulledMessage()
		r.setCondition(claim, v1beta1.ConditionWarmedUp, metav1.ConditionTrue, ReasonWarmedUp, message)
		r.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, ReasonImagesPulled, "PrePull", message)
		return r.stopAfterPrePull(ctx, claim, node, "the stop", ReasonWarmedUp, "Warmed up; stopping the instance")
	case progress.ended != "":
		// Nothing will change it: a pod made again at once would be rejected again at
		// the kubelet's pace, as many times as the timeout allows.
		r.failPrePull(claim, "The pre-pull "+progress.ended+"; the claim waits for its warmup timeout")
	case len(progress.failing) > 0:
		r.setCondition(claim, v1beta1.ConditionWarmedUp, metav1.ConditionFalse, ReasonImagePullFailed, progress.failureMessage())
		r.warnOnChange(claim, ReasonImagePullFailed, progress.failingImages(), progress.failureMessage())
	default:
		r.setCondition(claim, v1beta1.ConditionWarmedUp, metav1.ConditionFalse, ReasonPullingImages,
			fmt.Sprintf("Pod %s/%s pulled %d of %d images; %s", pod.Namespace, pod.Name, len(progress.pulled), len(warmup.Images), progress.missing()))
	}
	return false, wait, nil
}

// failPrePull records a pre-pull pod that cannot do its work, with a Warning Event when
// the words change.
func (r *Lifecycle) failPrePull(claim *v1beta1.NodeClaim, message string) {
	r.setCondition(claim, v1beta1.ConditionWarmedUp, metav1.ConditionFalse, ReasonPrePullFailed, message)
	r.warnOnChange(claim, ReasonPrePullFailed, message, message)
}

// warnOnChange records a Warning Event on the claim, unless the last one it recorded
// this way had the same reason and key: the kubelet retries a failing pull with
// backoff, and each retry changes the pod but not what the claim has to say.
func (r *Lifecycle) warnOnChange(claim *v1beta1.NodeClaim, reason, key, message string) {
	note := reason + "/" + key
	if previous, seen := r.warmupNotes.Swap(claim.UID, note); seen && previous == note {
		return
	}
	r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, reason, "PrePull", message)
}

// warmedUp reports whether the claim finished its warmup: its pre-pull pod pulled every
// image. A claim warms up once, so the condition stays True while it is WarmingUp.
func warmedUp(claim *v1beta1.NodeClaim) bool {
	return meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionWarmedUp)
}

// stopAfterPrePull removes the pre-pull pod, waits until it is gone, then stops the
// instance, unless the claim's pool is paused (action names what the pause holds): a
// pod left on a stopped node would stay there terminating.
func (r *Lifecycle) stopAfterPrePull(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node, action, reason, message string) (bool, ctrl.Result, error) {
	if err := r.hold(ctx, claim, action); err != nil {
		return false, ctrl.Result{}, err
	}
	gone, result, err := r.removePrePull(ctx, claim)
	if err != nil || !gone {
		return false, result, err
	}
	r.warmupNotes.Delete(claim.UID)
	return true, ctrl.Result{}, r.stop(ctx, claim, node, reason, message)
}

// warmupLeft is how long a claim meant for standby may still take to warm up; limited
// is false when no timeout applies.
func (r *Lifecycle) warmupLeft(claim *v1beta1.NodeClaim, warmup v1beta1.Warmup) (left time.Duration, limited bool) {
	if claim.Spec.DesiredState != v1beta1.DesiredStandby || warmup.Timeout == nil {
		return 0, false
	}
	return warmup.Timeout.Duration - r.since(claim.CreationTimestamp.Time), true
}

// checkWarmupTimeout applies the pool's warmup timeout to a claim meant for standby
// whose Node is not initialised yet (why says what it lacks): stop it anyway, or
// terminate it, as the pool says.
func (r *Lifecycle) checkWarmupTimeout(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node, why string) (bool, ctrl.Result, error) {
	warmup := r.warmupOf(ctx, claim)
	left, limited := r.warmupLeft(claim, warmup)
	if !limited {
		return false, r.requeueWithin(r.Options.ResyncInterval), nil
	}
	if left > 0 {
		return false, r.requeueWithin(left), nil
	}
	if len(warmup.Images) > 0 {
		why += "; " + r.notPulled(ctx, claim, warmup.Images)
	}
	return r.timeOutWarmup(ctx, claim, node, warmup, why)
}

// timeOutWarmup stops or terminates a claim whose warmup overran, as its pool says. The
// condition names what was missing when the timeout passed, and keeps saying so while
// the pre-pull pod goes: by then the pod no longer tells.
func (r *Lifecycle) timeOutWarmup(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node, warmup v1beta1.Warmup, why string) (bool, ctrl.Result, error) {
	if err := r.hold(ctx, claim, "the warmup timeout"); err != nil {
		return false, ctrl.Result{}, err
	}
	message := fmt.Sprintf("Warmup did not finish within %s: %s", warmup.Timeout.Duration, why)
	if c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionWarmedUp); c != nil && c.Reason == ReasonWarmupTimeout {
		message = c.Message
	}
	if warmup.TimeoutAction == v1beta1.WarmupTimeoutStop {
		r.setCondition(claim, v1beta1.ConditionWarmedUp, metav1.ConditionFalse, ReasonWarmupTimeout, message)
		return r.stopAfterPrePull(ctx, claim, node, "the warmup timeout", ReasonWarmupTimeout, message+"; stopping the instance as it is")
	}
	// The claim's termination removes the pre-pull pod with the instance; its pool
	// counts the failure by the condition.
	return false, ctrl.Result{}, r.removeForFailure(ctx, claim, v1beta1.ConditionWarmedUp, ReasonWarmupTimeout, message, message+"; terminating the instance")
}

// warmupOf returns the warmup settings of the claim's pool.
func (r *Lifecycle) warmupOf(ctx context.Context, claim *v1beta1.NodeClaim) v1beta1.Warmup {
	if pool := r.poolOf(ctx, claim); pool != nil {
		return pool.Spec.Standby.Warmup
	}
	return defaultWarmup
}

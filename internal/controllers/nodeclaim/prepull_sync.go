package nodeclaim

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podutil"
)

// The lifecycle controller creates the pre-pull pods in --prepull-namespace (the
// operator's own by default, so a Role); it reads and deletes them with the cluster-wide
// pod verbs drains need anyway (internal/operator).
// +kubebuilder:rbac:groups="",resources=pods,verbs=create,namespace=stratos

// prePullForceAfter is how long after its grace period a deleted pre-pull pod may stay
// terminating before it is deleted outright: a kubelet that does not confirm a deletion
// in that time (its node is not Ready, say) must not hold the stop back.
const prePullForceAfter = 10 * time.Second

// prePullKey is the name of the claim's pre-pull pod.
func (r *Lifecycle) prePullKey(claim *v1beta1.NodeClaim) client.ObjectKey {
	return client.ObjectKey{Namespace: r.Options.PrePullNamespace, Name: prePullName(claim.Name)}
}

// ensurePrePull makes sure the claim's pre-pull pod for images runs on node and returns
// it, or nil while it is being created or replaced; replacing, result says when to look
// again should the old pod not go. The pod is read from the cache: a pod this
// controller just created may not show there yet, and its creation then answers
// AlreadyExists, which is as good as a creation.
func (r *Lifecycle) ensurePrePull(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node, images []string) (*corev1.Pod, ctrl.Result, error) {
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, r.prePullKey(claim), pod)
	switch {
	case apierrors.IsNotFound(err):
		err := r.Client.Create(ctx, prePullPod(claim, r.Options.PrePullNamespace, node.Name, images))
		if err == nil {
			log.FromContext(ctx).V(1).Info("Created the pre-pull pod", "pod", r.prePullKey(claim), "images", len(images))
		}
		return nil, ctrl.Result{}, client.IgnoreAlreadyExists(err)
	case err != nil:
		return nil, ctrl.Result{}, err
	case !prePullCurrent(pod, claim, node.Name, images):
		log.FromContext(ctx).V(1).Info("Replacing a pre-pull pod that no longer matches its claim", "pod", r.prePullKey(claim), "node", pod.Spec.NodeName)
		_, result, err := r.removePrePull(ctx, claim)
		return nil, result, err
	}
	return pod, ctrl.Result{}, nil
}

// removePrePull deletes the claim's pre-pull pod and reports whether it is gone. It
// reads the API server rather than the cache, so that a pod created a moment ago is
// not taken for gone. A pod still terminating prePullForceAfter past its grace period
// is deleted outright. The pod's deletion wakes the claim; the requeue is for the force.
func (r *Lifecycle) removePrePull(ctx context.Context, claim *v1beta1.NodeClaim) (gone bool, result ctrl.Result, err error) {
	pod := &corev1.Pod{}
	if err := r.APIReader.Get(ctx, r.prePullKey(claim), pod); err != nil {
		return apierrors.IsNotFound(err), ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pod.DeletionTimestamp.IsZero() {
		err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		return false, ctrl.Result{RequeueAfter: time.Duration(prePullGracePeriod)*time.Second + prePullForceAfter}, ignoreGone(err)
	}
	// The deletion timestamp is when the grace period ends.
	if left := pod.DeletionTimestamp.Add(prePullForceAfter).Sub(r.Clock.Now()); left > 0 {
		return false, ctrl.Result{RequeueAfter: left}, nil
	}
	log.FromContext(ctx).Info("The pre-pull pod is still terminating past its grace; deleting it outright", "pod", r.prePullKey(claim), "node", pod.Spec.NodeName)
	err = r.Client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
	return false, r.poll(), ignoreGone(err)
}

// deletePrePull deletes the claim's pre-pull pod, if any, without waiting for it to go;
// force skips its grace period, for an instance that is going away with it.
func (r *Lifecycle) deletePrePull(ctx context.Context, claim *v1beta1.NodeClaim, force bool) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: r.Options.PrePullNamespace, Name: prePullName(claim.Name)}}
	var opts []client.DeleteOption
	if force {
		opts = append(opts, client.GracePeriodSeconds(0))
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, pod, opts...))
}

// notPulled says which images the Node has not pulled, as the pre-pull pod tells, for a
// warmup that timed out.
func (r *Lifecycle) notPulled(ctx context.Context, claim *v1beta1.NodeClaim, images []string) string {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, r.prePullKey(claim), pod); err != nil {
		return "not pulled: " + strings.Join(images, ", ")
	}
	return progressOf(pod).missing()
}

// ignoreGone ignores the errors of a deletion that found the pod gone or replaced.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// isRefused reports whether the API server refused the pre-pull pod for good, until
// someone changes the cluster: an admission policy (Pod Security, a webhook, a quota)
// or a namespace that does not exist.
func isRefused(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsNotFound(err) || apierrors.IsBadRequest(err)
}

// prePullToClaim maps a pre-pull pod to the claim that controls it.
func prePullToClaim(_ context.Context, obj client.Object) []ctrl.Request {
	if owner := metav1.GetControllerOfNoCopy(obj); owner != nil {
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Name: owner.Name}}}
	}
	return nil
}

// isPrePull passes the events of pre-pull pods — by owner and namespace, not a label
// any pod can carry: their creation, each status the kubelet reports, and their
// deletion all move a warmup on.
func isPrePull(namespace string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		pod, ok := obj.(*corev1.Pod)
		return ok && podutil.PrePull(pod, namespace)
	})
}

package explain

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Read gathers the facts about a pod with c, at now. The pod must exist; whatever else
// is gone (its Node, its claim) is left out of the facts.
func Read(ctx context.Context, c client.Reader, pod types.NamespacedName, now time.Time) (Facts, error) {
	f := Facts{Pod: &corev1.Pod{}, Now: now}
	if err := c.Get(ctx, pod, f.Pod); err != nil {
		if apierrors.IsNotFound(err) {
			return f, fmt.Errorf("pod %s not found in namespace %s", pod.Name, pod.Namespace)
		}
		return f, fmt.Errorf("reading pod %s: %w", pod, err)
	}
	var err error
	if f.PodEvents, err = eventsAbout(ctx, c, pod.Namespace, f.Pod.UID); err != nil {
		return f, err
	}
	if name := f.Pod.Spec.NodeName; name != "" {
		node := &corev1.Node{}
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, node); {
		case err == nil:
			f.Node = node
			f.ClaimName = node.Labels[v1beta1.LabelNodeClaim]
		case !apierrors.IsNotFound(err):
			return f, fmt.Errorf("reading node %s: %w", name, err)
		}
		if f.Claim, err = readClaim(ctx, c, f.ClaimName); err != nil {
			return f, err
		}
	} else if err := readPlacement(ctx, c, &f); err != nil {
		return f, err
	}
	if f.Claim != nil {
		// Both of client-go's recorders keep the Events about a cluster-scoped object
		// in the default namespace; reading only there needs no cluster-wide right.
		if f.ClaimEvents, err = eventsAbout(ctx, c, metav1.NamespaceDefault, f.Claim.UID); err != nil {
			return f, err
		}
	}
	pools := &v1beta1.NodePoolList{}
	if err := c.List(ctx, pools); err != nil {
		return f, fmt.Errorf("listing nodepools: %w", err)
	}
	f.Pools = pools.Items
	return f, nil
}

// readPlacement finds the claim provisioning placed a waiting pod on: the one its last
// reservation toleration names, if that claim is still asked to run; otherwise the one
// whose list of placed pods names the pod (PlacedOn), as a decision that reserves
// nothing writes nothing to the pod. A toleration naming a claim that is gone, with no
// list naming the pod, is kept: the explanation says the claim is gone.
func readPlacement(ctx context.Context, c client.Reader, f *Facts) error {
	var err error
	f.ClaimName = ReservedFor(f.Pod)
	if f.Claim, err = readClaim(ctx, c, f.ClaimName); err != nil || f.Claim != nil && askedToRun(f.Claim) {
		return err
	}
	claims := &v1beta1.NodeClaimList{}
	if err := c.List(ctx, claims); err != nil {
		return fmt.Errorf("listing nodeclaims: %w", err)
	}
	if placed := PlacedOn(f.Pod, claims.Items); placed != nil {
		f.ClaimName, f.Claim = placed.Name, placed
	}
	return nil
}

// readClaim reads the claim of name; nil when name is empty or the claim is gone.
func readClaim(ctx context.Context, c client.Reader, name string) (*v1beta1.NodeClaim, error) {
	if name == "" {
		return nil, nil
	}
	claim := &v1beta1.NodeClaim{}
	switch err := c.Get(ctx, client.ObjectKey{Name: name}, claim); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading nodeclaim %s: %w", name, err)
	}
	return claim, nil
}

// ReservedFor names the claim provisioning last placed the pod on: the value of its last
// toleration of the stratos.sh/reserved taint, which provisioning adds when it places
// the pod (tolerations only grow, so the last one is the latest placement); empty when
// it has none.
func ReservedFor(pod *corev1.Pod) string {
	for i := len(pod.Spec.Tolerations) - 1; i >= 0; i-- {
		if t := pod.Spec.Tolerations[i]; t.Key == v1beta1.TaintReservedKey && t.Value != "" {
			return t.Value
		}
	}
	return ""
}

// eventsAbout lists the Events about the object of uid, in namespace.
func eventsAbout(ctx context.Context, c client.Reader, namespace string, uid types.UID) ([]Event, error) {
	list := &corev1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("involvedObject.uid", string(uid))}); err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	out := make([]Event, len(list.Items))
	for i := range list.Items {
		out[i] = EventOf(&list.Items[i])
	}
	return out, nil
}

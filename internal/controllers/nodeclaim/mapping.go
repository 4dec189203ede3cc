package nodeclaim

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/indexes"
)

// nodeToClaim maps a Node to its claim by the stratos.sh/nodeclaim label, else by its
// provider ID: the fake cloud's kubelets register with the label, while on EC2 the
// label is left out of the user data so that the claims of a pool share one launch
// template, and the operator adds it at registration.
func (r *Lifecycle) nodeToClaim(ctx context.Context, obj client.Object) []ctrl.Request {
	if name := obj.GetLabels()[v1beta1.LabelNodeClaim]; name != "" {
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Name: name}}}
	}
	node, ok := obj.(*corev1.Node)
	if !ok || node.Spec.ProviderID == "" {
		return nil
	}
	claims := &v1beta1.NodeClaimList{}
	if err := r.Client.List(ctx, claims, client.MatchingFields{indexes.ClaimProviderID: node.Spec.ProviderID}); err != nil {
		log.FromContext(ctx).Error(err, "Listing the claim of a Node by provider ID", "node", node.Name)
		return nil
	}
	requests := make([]ctrl.Request, 0, len(claims.Items))
	for _, c := range claims.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
	}
	return requests
}

// podToClaim maps a pod to the claim of the Node it is bound to.
func (r *Lifecycle) podToClaim(ctx context.Context, obj client.Object) []ctrl.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil
	}
	claims := &v1beta1.NodeClaimList{}
	if err := r.Client.List(ctx, claims, client.MatchingFields{indexes.ClaimNodeName: pod.Spec.NodeName}); err != nil {
		log.FromContext(ctx).Error(err, "Listing the claim of a pod's Node", "node", pod.Spec.NodeName)
		return nil
	}
	requests := make([]ctrl.Request, 0, len(claims.Items))
	for _, c := range claims.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
	}
	return requests
}

package nodeclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/nodeclass"
)

// instanceLabels are the instance labels of the claim's type that its registered Node
// lacks, to be added in the patch that shapes the Node at registration. A kubelet that
// knows its instance type when it boots registers with them (the fake cloud's do); on
// EC2 the fleet picks the type after the node's boot configuration is written, so
// Stratos adds them, as Karpenter does. Every type has an instance-cpu label: a Node
// that carries one has them all, and costs no catalogue read.
func (r *Lifecycle) instanceLabels(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node) (map[string]string, error) {
	if _, ok := node.Labels[v1beta1.LabelInstanceCPU]; ok || claim.Status.InstanceType == "" {
		return nil, nil
	}
	class, err := nodeclass.Get(ctx, r.Client, claim.Spec.NodeClassRef)
	if apierrors.IsNotFound(err) {
		log.FromContext(ctx).Info("The node class is gone: the Node goes without its instance labels", "node", node.Name)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	types, err := r.Cloud.InstanceTypes(ctx, class)
	if err != nil {
		return nil, fmt.Errorf("reading the instance labels of %s: %w", claim.Status.InstanceType, err)
	}
	for _, it := range types {
		if it.Name == claim.Status.InstanceType {
			return it.Attributes, nil
		}
	}
	log.FromContext(ctx).Info("The node class no longer offers the instance type: the Node goes without its instance labels", "node", node.Name, "instanceType", claim.Status.InstanceType)
	return nil, nil
}

// addMissingLabels adds to node the labels it does not have, leaving those it has as
// they are, and reports whether it added any.
func addMissingLabels(node *corev1.Node, labels map[string]string) bool {
	changed := false
	for k, v := range labels {
		if _, ok := node.Labels[k]; ok {
			continue
		}
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[k], changed = v, true
	}
	return changed
}

// Package indexes declares the cache field indexes the controllers look objects up by,
// so that a lookup is a map access instead of a List over every object.
package indexes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Index names.
const (
	// NodeProviderID indexes Nodes by spec.providerID.
	NodeProviderID = "spec.providerID"
	// PodNodeName indexes Pods by spec.nodeName.
	PodNodeName = "spec.nodeName"
	// ClaimNodePool indexes NodeClaims by spec.nodePool.
	ClaimNodePool = "spec.nodePool"
	// ClaimProviderID indexes NodeClaims by status.providerID.
	ClaimProviderID = "status.providerID"
	// ClaimNodeName indexes NodeClaims by status.nodeName.
	ClaimNodeName = "status.nodeName"
	// ClaimInstanceID indexes NodeClaims by status.instanceID: the cloud's notices name
	// instances.
	ClaimInstanceID = "status.instanceID"
	// PoolNodeClass indexes NodePools by their node class, as "Kind/name".
	PoolNodeClass = "spec.template.spec.nodeClassRef"
)

// NodeClassKey is the PoolNodeClass index value of a node class.
func NodeClassKey(kind, name string) string { return kind + "/" + name }

type index struct {
	obj     client.Object
	field   string
	extract func(client.Object) []string
}

// nonEmpty returns a one-value index entry, or none for an empty value.
func nonEmpty(value string) []string {
	if value == "" {
		return nil
	}
	return []string{value}
}

var all = []index{
	{&corev1.Node{}, NodeProviderID, func(o client.Object) []string { return nonEmpty(o.(*corev1.Node).Spec.ProviderID) }},
	{&corev1.Pod{}, PodNodeName, func(o client.Object) []string { return nonEmpty(o.(*corev1.Pod).Spec.NodeName) }},
	{&v1beta1.NodeClaim{}, ClaimNodePool, func(o client.Object) []string { return nonEmpty(o.(*v1beta1.NodeClaim).Spec.NodePool) }},
	{&v1beta1.NodeClaim{}, ClaimProviderID, func(o client.Object) []string { return nonEmpty(o.(*v1beta1.NodeClaim).Status.ProviderID) }},
	{&v1beta1.NodeClaim{}, ClaimNodeName, func(o client.Object) []string { return nonEmpty(o.(*v1beta1.NodeClaim).Status.NodeName) }},
	{&v1beta1.NodeClaim{}, ClaimInstanceID, func(o client.Object) []string { return nonEmpty(o.(*v1beta1.NodeClaim).Status.InstanceID) }},
	{&v1beta1.NodePool{}, PoolNodeClass, func(o client.Object) []string {
		ref := o.(*v1beta1.NodePool).Spec.Template.Spec.NodeClassRef
		return []string{NodeClassKey(ref.Kind, ref.Name)}
	}},
}

// Register adds every index to the manager's cache.
func Register(ctx context.Context, indexer client.FieldIndexer) error {
	for _, i := range all {
		if err := indexer.IndexField(ctx, i.obj, i.field, i.extract); err != nil {
			return err
		}
	}
	return nil
}

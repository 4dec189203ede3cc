// Package v1beta1 holds the stratos.sh/v1beta1 API: NodePool, NodeClaim and the node
// classes. The CRDs in config/crd/bases are generated from these types by controller-gen
// (make generate); validation lives in the markers next to each field.
//
// +kubebuilder:object:generate=true
// +groupName=stratos.sh
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of every Stratos kind.
const Group = "stratos.sh"

var (
	// GroupVersion is the group and version of these types.
	GroupVersion = schema.GroupVersion{Group: Group, Version: "v1beta1"}

	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&NodePool{}, &NodePoolList{},
		&NodeClaim{}, &NodeClaimList{},
		&FakeNodeClass{}, &FakeNodeClassList{},
		&EC2NodeClass{}, &EC2NodeClassList{},
		&ClusterAPINodeClass{}, &ClusterAPINodeClassList{},
		&NodePoolDemand{}, &NodePoolDemandList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}

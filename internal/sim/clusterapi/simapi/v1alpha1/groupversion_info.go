// Package v1alpha1 holds the sim.stratos.sh/v1alpha1 API: the simulator's own Cluster API
// providers, an infrastructure provider (SimCluster, SimMachine and its template), a
// bootstrap provider (SimConfig and its template) and a control plane provider
// (SimControlPlane) over the fake cloud. They follow CAPI's v1beta2 provider contracts, so
// that CAPI's real controllers move Machines in tests and in stratos-sim. They are the
// simulator's: Stratos itself never imports them and talks only to CAPI's objects. The
// CRDs in ../crds are generated from these types by controller-gen (make generate).
//
// +kubebuilder:object:generate=true
// +groupName=sim.stratos.sh
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of the simulator's providers.
const Group = "sim.stratos.sh"

var (
	// GroupVersion is the group and version of these types.
	GroupVersion = schema.GroupVersion{Group: Group, Version: "v1alpha1"}

	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kinds, as CAPI's contract-versioned references name them.
const (
	KindSimCluster         = "SimCluster"
	KindSimControlPlane    = "SimControlPlane"
	KindSimMachine         = "SimMachine"
	KindSimMachineTemplate = "SimMachineTemplate"
	KindSimConfig          = "SimConfig"
	KindSimConfigTemplate  = "SimConfigTemplate"
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&SimCluster{}, &SimClusterList{},
		&SimControlPlane{}, &SimControlPlaneList{},
		&SimMachine{}, &SimMachineList{},
		&SimMachineTemplate{}, &SimMachineTemplateList{},
		&SimConfig{}, &SimConfigList{},
		&SimConfigTemplate{}, &SimConfigTemplateList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}

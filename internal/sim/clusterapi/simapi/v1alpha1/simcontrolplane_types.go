package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// SimControlPlane is the control plane of a simulated cluster (CAPI's ControlPlane
// contract, without Machines): the simulator's real kube-apiserver, already running, so
// it is initialized at once and reports the version it is given.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simcontrolplanes,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.metadata.labels['cluster\.x-k8s\.io/cluster-name']`
// +kubebuilder:printcolumn:name="Initialized",type=boolean,JSONPath=`.status.initialization.controlPlaneInitialized`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SimControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SimControlPlaneSpec   `json:"spec,omitempty"`
	Status SimControlPlaneStatus `json:"status,omitempty"`
}

// SimControlPlaneSpec is the desired control plane.
type SimControlPlaneSpec struct {
	// version is the Kubernetes version the simulator's API server stands for, such as
	// v1.37.0.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^v?[0-9]+\.[0-9]+\.[0-9]+([-+].*)?$`
	Version string `json:"version"`
}

// SimControlPlaneStatus is what the simulator reports of the control plane.
type SimControlPlaneStatus struct {
	// initialization reports that the control plane accepts requests, as CAPI's
	// contract reads it.
	// +optional
	Initialization SimControlPlaneInitializationStatus `json:"initialization,omitempty,omitzero"`

	// version is the control plane's Kubernetes version (the contract's fallback field).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// versions are the control plane's Kubernetes versions: one, the spec's.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Versions []clusterv1.StatusVersion `json:"versions,omitempty"`

	// externalManagedControlPlane is true: the control plane has no Nodes in the cluster.
	// +optional
	ExternalManagedControlPlane *bool `json:"externalManagedControlPlane,omitempty"`

	// observedGeneration is the generation the status is for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Available, Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SimControlPlaneInitializationStatus reports the control plane's initialization.
// +kubebuilder:validation:MinProperties=1
type SimControlPlaneInitializationStatus struct {
	// controlPlaneInitialized is true once the control plane accepts requests.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// +kubebuilder:object:root=true

// SimControlPlaneList is a list of SimControlPlanes.
type SimControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimControlPlane `json:"items"`
}

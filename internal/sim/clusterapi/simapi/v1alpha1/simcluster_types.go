package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// SimCluster is the infrastructure of a simulated cluster (CAPI's InfraCluster
// contract): there is nothing to build, so it is provisioned at once, with the fake
// cloud's zones (or those of them spec.zones names) as its failure domains and the simulator's API server as its control
// plane endpoint.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simclusters,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.metadata.labels['cluster\.x-k8s\.io/cluster-name']`
// +kubebuilder:printcolumn:name="Provisioned",type=boolean,JSONPath=`.status.initialization.provisioned`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SimCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SimClusterSpec   `json:"spec,omitempty"`
	Status SimClusterStatus `json:"status,omitempty"`
}

// SimClusterSpec is the desired infrastructure of a simulated cluster.
type SimClusterSpec struct {
	// controlPlaneEndpoint is the simulator's API server, which CAPI copies to the
	// Cluster once the SimCluster is provisioned.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// zones are the fake cloud's zones the cluster offers as failure domains; empty
	// means all of them. A zone the cloud does not have keeps the cluster unprovisioned.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Zones []string `json:"zones,omitempty"`
}

// SimClusterStatus is what the simulator reports of a cluster's infrastructure.
type SimClusterStatus struct {
	// initialization reports the SimCluster's provisioning, as CAPI's contract reads it.
	// +optional
	Initialization SimClusterInitializationStatus `json:"initialization,omitempty,omitzero"`

	// failureDomains are the fake cloud's zones.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`

	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SimClusterInitializationStatus reports the SimCluster's provisioning.
// +kubebuilder:validation:MinProperties=1
type SimClusterInitializationStatus struct {
	// provisioned is true once the cluster's infrastructure is ready.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// +kubebuilder:object:root=true

// SimClusterList is a list of SimClusters.
type SimClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimCluster `json:"items"`
}

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterAPINodeClass launches nodes as Cluster API Machines: for each NodeClaim, a
// bootstrap config and an infrastructure machine made from the templates it names, and
// a Machine of its cluster that refers to both, as a MachineDeployment's template does.
// CAPI has no catalogue of machine shapes, so the class states the instance types it
// offers, with their capacity, zones (failure domains) and price.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=scapinc,categories=stratos
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster.name`
// +kubebuilder:printcolumn:name="Infrastructure",type=string,JSONPath=`.spec.infrastructureTemplateRef.kind`
// +kubebuilder:printcolumn:name="Standby",type=string,JSONPath=`.status.standby`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterAPINodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterAPINodeClassSpec `json:"spec"`
	// +optional
	Status ClusterAPINodeClassStatus `json:"status,omitempty"`
}

// ClusterAPINodeClassSpec names the CAPI cluster, the templates its Machines are made
// from, and the instance types they may be.
//
// +kubebuilder:validation:XValidation:rule="self.instanceTypes.all(t, self.instanceTypes.exists_one(u, u.name == t.name))",message="instance type names must be unique"
type ClusterAPINodeClassSpec struct {
	// Cluster is the CAPI Cluster the Machines join; the templates live in its namespace.
	// +required
	Cluster ClusterAPIClusterReference `json:"cluster"`

	// BootstrapTemplateRef names the bootstrap config template (a KubeadmConfigTemplate,
	// say) in the cluster's namespace, as a MachineDeployment's
	// spec.template.spec.bootstrap.configRef does.
	// +required
	BootstrapTemplateRef ClusterAPITemplateReference `json:"bootstrapTemplateRef"`

	// InfrastructureTemplateRef names the infrastructure machine template (a
	// Metal3MachineTemplate, a VSphereMachineTemplate, ...) in the cluster's namespace. An
	// instance type may name its own.
	// +required
	InfrastructureTemplateRef ClusterAPITemplateReference `json:"infrastructureTemplateRef"`

	// Version is the Kubernetes version of the Machines, as Machine.spec.version.
	// +required
	// +kubebuilder:validation:Pattern=`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]+)?$`
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version"`

	// InstanceTypes are the machine shapes the class offers. The cheapest that fits a
	// claim's requests and requirements is chosen, as from a cloud's catalogue.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	InstanceTypes []ClusterAPIInstanceType `json:"instanceTypes"`
}

// ClusterAPIClusterReference names a CAPI Cluster.
type ClusterAPIClusterReference struct {
	// Namespace of the Cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`
	// Name of the Cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
}

// ClusterAPITemplateReference names a template in the cluster's namespace by API group,
// kind and name, as CAPI v1beta2's contract-versioned references do: the version is the
// one the group's CRD declares for CAPI's contract.
type ClusterAPITemplateReference struct {
	// APIGroup of the template, such as bootstrap.cluster.x-k8s.io.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	APIGroup string `json:"apiGroup"`
	// Kind of the template, such as KubeadmConfigTemplate.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9]*$`
	Kind string `json:"kind"`
	// Name of the template.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ClusterAPIInstanceType is a machine shape the class offers, as the user states it.
//
// +kubebuilder:validation:XValidation:rule="has(self.capacity.cpu) && has(self.capacity.memory)",message="capacity must give cpu and memory"
// +kubebuilder:validation:XValidation:rule="!has(self.stoppedPricePerHour) || double(self.stoppedPricePerHour) <= double(self.pricePerHour)",message="stoppedPricePerHour cannot exceed pricePerHour"
type ClusterAPIInstanceType struct {
	// Name of the type; the Nodes carry it as node.kubernetes.io/instance-type.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?$`
	Name string `json:"name"`

	// Capacity of a machine of the type: cpu and memory, and pods, ephemeral-storage and
	// extended resources as the kubelet will report them.
	// +required
	Capacity corev1.ResourceList `json:"capacity"`

	// Architecture of the machines: amd64 or arm64. Defaults to amd64.
	// +optional
	// +kubebuilder:default=amd64
	// +kubebuilder:validation:Enum=amd64;arm64
	Architecture string `json:"architecture,omitempty"`

	// Zones the type can be placed in: CAPI failure domains of the cluster, which the
	// Nodes carry as topology.kubernetes.io/zone.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	Zones []string `json:"zones"`

	// Labels the Nodes of the type carry besides the well-known ones; pools' requirements
	// may select on them. Unset: only the well-known labels.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Labels map[string]string `json:"labels,omitempty"`

	// PricePerHour is what a running machine of the type costs, in US dollars, as a
	// decimal string: the price consolidation and the choice of type compare.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +kubebuilder:validation:MaxLength=16
	PricePerHour string `json:"pricePerHour"`

	// StoppedPricePerHour is what a powered-off machine of the type costs, in US dollars
	// (its disks, its rack space). Defaults to 0.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +kubebuilder:validation:MaxLength=16
	StoppedPricePerHour string `json:"stoppedPricePerHour,omitempty"`

	// InfrastructureTemplateRef is the infrastructure machine template of this type
	// instead of the class's (a vSphere template with this type's CPUs and memory, say).
	// Unset: the class's template.
	// +optional
	InfrastructureTemplateRef *ClusterAPITemplateReference `json:"infrastructureTemplateRef,omitempty"`
}

// Standby support of a ClusterAPINodeClass's infrastructure.
const (
	// ClusterAPIStandbySupported: Stratos can power the infrastructure's machines off and
	// on, so pools of the class keep warm pools.
	ClusterAPIStandbySupported = "Supported"
	// ClusterAPIStandbyUnsupported: Stratos knows no power interface for the
	// infrastructure kind; pools of the class keep no warm pool.
	ClusterAPIStandbyUnsupported = "Unsupported"
)

// ClusterAPINodeClassStatus is what the class resolved.
type ClusterAPINodeClassStatus struct {
	NodeClassStatus `json:",inline"`

	// Standby says whether Stratos can power the class's machines off and on, which a
	// warm pool needs: Supported or Unsupported.
	// +optional
	Standby string `json:"standby,omitempty"`
}

// ClusterAPINodeClassList is a list of ClusterAPINodeClasses.
//
// +kubebuilder:object:root=true
type ClusterAPINodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterAPINodeClass `json:"items"`
}

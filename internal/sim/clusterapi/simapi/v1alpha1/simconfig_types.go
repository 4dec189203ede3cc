package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// SimConfig is a simulated machine's bootstrap configuration (CAPI's BootstrapConfig
// contract) in a subset of kubeadm's KubeadmConfig shape: what the kubelet registers the
// Node with. Its controller writes it into the bootstrap data Secret, which the
// SimMachine reads to launch its instance.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simconfigs,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:printcolumn:name="DataSecret",type=string,JSONPath=`.status.dataSecretName`
// +kubebuilder:printcolumn:name="Created",type=boolean,JSONPath=`.status.initialization.dataSecretCreated`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SimConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SimConfigSpec   `json:"spec,omitempty"`
	Status SimConfigStatus `json:"status,omitempty"`
}

// SimConfigSpec is the bootstrap configuration, in kubeadm's shape.
type SimConfigSpec struct {
	// joinConfiguration is how the machine's kubelet joins the cluster.
	// +optional
	JoinConfiguration JoinConfiguration `json:"joinConfiguration,omitempty,omitzero"`
}

// JoinConfiguration is the subset of kubeadm's JoinConfiguration the simulator uses.
type JoinConfiguration struct {
	// nodeRegistration is what the kubelet registers the Node with.
	// +optional
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty,omitzero"`
}

// NodeRegistrationOptions is the subset of kubeadm's NodeRegistrationOptions the
// simulator uses.
type NodeRegistrationOptions struct {
	// taints the Node registers with.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Taints []corev1.Taint `json:"taints,omitempty"`

	// kubeletExtraArgs are the kubelet's extra flags; the simulator reads node-labels
	// (k=v pairs joined by commas) and max-pods and ignores the others.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	KubeletExtraArgs []Arg `json:"kubeletExtraArgs,omitempty"`
}

// Arg is one flag of a component, as kubeadm's v1beta2 Arg.
type Arg struct {
	// name is the flag's name, without dashes.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// value is the flag's value.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`
}

// SimConfigStatus is what the simulator reports of a bootstrap configuration.
type SimConfigStatus struct {
	// initialization reports the bootstrap data's creation, as CAPI's contract reads it.
	// +optional
	Initialization SimConfigInitializationStatus `json:"initialization,omitempty,omitzero"`

	// dataSecretName is the Secret that holds the bootstrap data.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DataSecretName string `json:"dataSecretName,omitempty"`

	// observedGeneration is the generation the status is for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, with a reason when the configuration is invalid.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SimConfigInitializationStatus reports the bootstrap data's creation.
// +kubebuilder:validation:MinProperties=1
type SimConfigInitializationStatus struct {
	// dataSecretCreated is true once the bootstrap data Secret exists.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// +kubebuilder:object:root=true

// SimConfigList is a list of SimConfigs.
type SimConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimConfig `json:"items"`
}

// SimConfigTemplate is what SimConfigs are made from (CAPI's BootstrapConfigTemplate
// contract).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simconfigtemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
type SimConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec SimConfigTemplateSpec `json:"spec,omitempty"`
}

// SimConfigTemplateSpec holds the template.
type SimConfigTemplateSpec struct {
	// template is the SimConfig made from the template.
	// +required
	Template SimConfigTemplateResource `json:"template"`
}

// SimConfigTemplateResource is the metadata and spec of SimConfigs made from a template.
type SimConfigTemplateResource struct {
	// metadata is given to the SimConfigs made from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the spec of the SimConfigs made from the template.
	// +optional
	Spec SimConfigSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// SimConfigTemplateList is a list of SimConfigTemplates.
type SimConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimConfigTemplate `json:"items"`
}

package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Provisioning strategies. ActiveCapacity is the API's default: room for the buffer's
// pods on running nodes. StandbyCapacity is Stratos's: room on standby (stopped) nodes,
// started when real pods come.
const (
	StrategyActiveCapacity  = "buffer.x-k8s.io/active-capacity"
	StrategyStandbyCapacity = "stratos.sh/standby-capacity"
)

// Condition types of a buffer's status, as the API's implementations write them.
const (
	// ConditionReadyForProvisioning: the buffer's pod template and replicas are resolved.
	ConditionReadyForProvisioning = "ReadyForProvisioning"
	// ConditionProvisioning: an autoscaler keeps the buffer's room.
	ConditionProvisioning = "Provisioning"
	// ConditionLimitedByQuotas: the buffer's limits cut its replicas.
	ConditionLimitedByQuotas = "LimitedByQuotas"
)

// CapacityBuffer asks for spare room in the cluster: capacity for a number of pods of a
// template that do not exist yet, kept by an autoscaler so that pods like them start at
// once.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=capacitybuffers,scope=Namespaced,shortName=cb
// +kubebuilder:printcolumn:name="Strategy",type="string",JSONPath=".spec.provisioningStrategy"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type=='ReadyForProvisioning')].reason"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type CapacityBuffer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says what room to keep.
	Spec CapacityBufferSpec `json:"spec"`

	// Status is what the autoscaler resolved and keeps.
	// +optional
	Status CapacityBufferStatus `json:"status,omitempty"`
}

// LocalObjectRef names an object in the buffer's namespace.
type LocalObjectRef struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// ScalableRef names a workload with a scale subresource in the buffer's namespace, such
// as a Deployment.
type ScalableRef struct {
	// APIGroup of the workload; empty for the core group.
	// +optional
	APIGroup string `json:"apiGroup,omitempty"`
	// Kind of the workload, such as Deployment or StatefulSet.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Name of the workload.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// ResourceName names a resource, as core/v1's ResourceName does.
type ResourceName string

// ResourceList is a set of resource quantities, as core/v1's ResourceList is.
type ResourceList map[ResourceName]resource.Quantity

// CapacityBufferSpec is the room asked for.
//
// +kubebuilder:validation:XValidation:rule="has(self.podTemplateRef) != has(self.scalableRef)",message="exactly one of podTemplateRef and scalableRef must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.podTemplateRef) || has(self.replicas) || has(self.limits)",message="a buffer of a podTemplateRef needs replicas or limits"
// +kubebuilder:validation:XValidation:rule="!has(self.percentage) || has(self.scalableRef)",message="percentage applies only to a scalableRef"
type CapacityBufferSpec struct {
	// ProvisioningStrategy says how the room is kept:
	// buffer.x-k8s.io/active-capacity (the default) on running nodes,
	// stratos.sh/standby-capacity on standby nodes. A strategy Stratos does not know is
	// left to the autoscaler that does.
	// +optional
	// +kubebuilder:default="buffer.x-k8s.io/active-capacity"
	// +kubebuilder:validation:MaxLength=253
	ProvisioningStrategy *string `json:"provisioningStrategy,omitempty"`

	// PodTemplateRef names the PodTemplate of one chunk of the buffer. Unset when
	// scalableRef is set.
	// +optional
	PodTemplateRef *LocalObjectRef `json:"podTemplateRef,omitempty"`

	// ScalableRef names a workload whose pod template is the chunk's. Unset when
	// podTemplateRef is set.
	// +optional
	ScalableRef *ScalableRef `json:"scalableRef,omitempty"`

	// Replicas is how many chunks to keep room for. With percentage too, the larger
	// wins; unset, and percentage too, as many as the limits allow.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Percentage is the number of chunks as a share of the scalableRef's current
	// replicas, rounded up (to at least one when the workload has any). Unset: replicas
	// alone counts.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Percentage *int32 `json:"percentage,omitempty"`

	// Limits cap the chunks by their total requests, such as {cpu: "20"}. Unset: no
	// cap.
	// +optional
	Limits *ResourceList `json:"limits,omitempty"`
}

// CapacityBufferStatus is the resolved buffer.
type CapacityBufferStatus struct {
	// PodTemplateRef names the PodTemplate of a chunk as resolved: the spec's, or the
	// one the autoscaler made from the scalableRef's pod template.
	// +optional
	PodTemplateRef *LocalObjectRef `json:"podTemplateRef,omitempty"`

	// Replicas is the number of chunks room is kept for.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// PodTemplateGeneration is the generation of the PodTemplate resolved.
	// +optional
	PodTemplateGeneration *int64 `json:"podTemplateGeneration,omitempty"`

	// Conditions: ReadyForProvisioning, Provisioning, LimitedByQuotas.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ProvisioningStrategy is the strategy resolved.
	// +optional
	ProvisioningStrategy *string `json:"provisioningStrategy,omitempty"`
}

// CapacityBufferList is a list of CapacityBuffer.
//
// +kubebuilder:object:root=true
type CapacityBufferList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CapacityBuffer `json:"items"`
}

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeClaim is one cloud instance Stratos owns. It is created before the instance, so it
// is the in-flight capacity, the scheduling decision (labels, taints) and the owner of the
// instance. The kubelet creates the Node; Stratos never does.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=snc,categories=stratos
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Pool",type=string,JSONPath=`.spec.nodePool`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Desired",type=string,JSONPath=`.spec.desiredState`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.status.instanceType`
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.status.zone`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.nodeName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Instance",type=string,JSONPath=`.status.instanceID`,priority=1
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.status.capacityType`,priority=1
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 63",optionalOldSelf=true,message="a NodeClaim's name must be at most 63 characters: it is the value of its Node's stratos.sh/nodeclaim label"
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NodeClaimSpec `json:"spec"`
	// +optional
	Status NodeClaimStatus `json:"status,omitempty"`
}

// DesiredState is what other controllers ask of a claim. The lifecycle controller alone
// turns it into cloud calls.
// +kubebuilder:validation:Enum=Running;Standby;Terminated
type DesiredState string

const (
	// DesiredRunning asks for a started, schedulable node.
	DesiredRunning DesiredState = "Running"
	// DesiredStandby asks for a warmed, stopped node.
	DesiredStandby DesiredState = "Standby"
	// DesiredTerminated asks for the node to be drained and then removed: once its pods
	// are gone, the lifecycle controller deletes the claim, which terminates the
	// instance. Until the drain ends it can be taken back (Running again), unlike a
	// deletion.
	DesiredTerminated DesiredState = "Terminated"
)

// NodeClaimSpec is what the claim's instance must be. Everything but desiredState is
// fixed at creation: a different node is a different claim.
//
// +kubebuilder:validation:XValidation:rule="has(self.requirements) == has(oldSelf.requirements) && has(self.taints) == has(oldSelf.taints) && has(self.startupTaints) == has(oldSelf.startupTaints) && has(self.kubelet) == has(oldSelf.kubelet)",message="only desiredState may change after a claim is created"
type NodeClaimSpec struct {
	// NodePool is the pool the claim belongs to, at most 63 characters as the pool's
	// name is: it is the value of the Node's stratos.sh/nodepool label.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nodePool is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="nodePool must be the name of a NodePool, a lowercase DNS subdomain"
	NodePool string `json:"nodePool"`

	// NodeClassRef is the node class the instance launches with.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nodeClassRef is immutable"
	NodeClassRef NodeClassReference `json:"nodeClassRef"`

	// Requirements the instance type, zone, architecture, capacity type and instance
	// labels must meet. Unset: any the node class allows.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=30
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="requirements are immutable"
	Requirements []NodeSelectorRequirement `json:"requirements,omitempty"`

	// Resources the instance must be able to hold, such as the pods nominated to it.
	// Unset: any size fits.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="resources are immutable"
	Resources ResourceRequests `json:"resources,omitempty"`

	// Taints the Node carries for its whole life. Unset: none.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="taints are immutable"
	Taints []Taint `json:"taints,omitempty"`

	// StartupTaints the Node registers with and another agent removes. Unset: none.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="startupTaints are immutable"
	StartupTaints []Taint `json:"startupTaints,omitempty"`

	// Kubelet configures the Node's kubelet, from the pool's template. Unset: the
	// defaults of the node class's image.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="kubelet is immutable"
	Kubelet *KubeletConfiguration `json:"kubelet,omitempty"`

	// DesiredState is Running (a started, schedulable node), Standby (warmed and
	// stopped) or Terminated (drained, then removed with its instance). Provisioning and
	// disruption write it; the lifecycle controller acts on it. A running node asked to
	// stand by or to be terminated drains first, and goes on running if asked to run
	// again before its drain ends. Defaults to Running.
	// +optional
	// +kubebuilder:default=Running
	DesiredState DesiredState `json:"desiredState,omitempty"`
}

// ResourceRequests are the resources a claim must hold.
type ResourceRequests struct {
	// Requests such as cpu, memory, pods and extended resources. Unset: none.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// NodeClaimStatus is what the lifecycle controller observed of the claim's instance and Node.
type NodeClaimStatus struct {
	// Phase of the claim; see docs/concepts.md for the transitions.
	// +optional
	Phase NodeClaimPhase `json:"phase,omitempty"`

	// ProviderID of the instance, as the Node's spec.providerID reports it.
	// +optional
	ProviderID string `json:"providerID,omitempty"`

	// InstanceID is the cloud's identifier of the instance.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`

	// ImageID is the machine image the instance was launched from, where the cloud has
	// images (ami-... on EC2); a node class that now resolves to another image has drifted.
	// +optional
	ImageID string `json:"imageID,omitempty"`

	// InstanceProfile is the IAM instance profile the instance was launched with, where
	// the cloud has them (EC2); a node class whose profile is now another one (its
	// spec.role changed) has drifted, and the old profile is kept while a claim records it.
	// +optional
	InstanceProfile string `json:"instanceProfile,omitempty"`

	// InstanceType the instance was launched as.
	// +optional
	InstanceType string `json:"instanceType,omitempty"`

	// Zone the instance runs in.
	// +optional
	Zone string `json:"zone,omitempty"`

	// CapacityType is on-demand or spot.
	// +optional
	CapacityType string `json:"capacityType,omitempty"`

	// Interruption is the last notice the cloud gave that the instance will be, or may
	// be, taken away; unset while none came.
	// +optional
	Interruption *Interruption `json:"interruption,omitempty"`

	// NodeName of the registered Node.
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// Capacity of the instance.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// Allocatable is the capacity left for pods once the system reserves are taken.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// TemplateHash is the hash of what the claim was made from: the pool template when
	// the claim was created (its labels, taints and requirements are copied then) and
	// the node class it launched with. A different hash of the pool's current template
	// and node class means the claim has drifted.
	// +optional
	TemplateHash string `json:"templateHash,omitempty"`

	// LastPhaseChangeTime is when the phase last changed.
	// +optional
	LastPhaseChangeTime *metav1.Time `json:"lastPhaseChangeTime,omitempty"`

	// Conditions: Launched, Registered, Initialized, WarmedUp, Started, Drifted, Empty,
	// Consolidatable, InstanceLost, DisruptionBlocked, Interrupted, Unhealthy. Started is False, with the cloud's
	// error code as its reason, when the cloud refused the last start for lack of
	// capacity or quota. InstanceLost is True while the cloud does not answer for the
	// instance as the cluster's and Stratos waits instead of removing the claim:
	// OwnershipLost (the instance lacks the cluster's tag) or InstancesVanished (not
	// found, with many of its pool's instances at once). DisruptionBlocked is True while
	// disruption keeps the node because a PodDisruptionBudget does not let its pods go
	// now; its message names the pod and the budget. Interrupted is True once the cloud
	// gave notice that it takes the instance away or recommends moving off it (reason
	// SpotInterruption, ScheduledChange or RebalanceRecommendation; see interruption).
	// Unhealthy is True while the Node is unhealthy as the pool's repair defines it
	// (reason NotReady or the node condition's type).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodeClaimList is a list of NodeClaims.
//
// +kubebuilder:object:root=true
type NodeClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeClaim `json:"items"`
}

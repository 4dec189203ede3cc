package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// FakeNodeClass launches nodes in Stratos's simulated cloud, for tests, the demo and the
// simulator. It narrows the fake catalogue and may override the cloud's physics and faults
// for the nodes of the pools that use it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=sfnc,categories=stratos
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Types",type=string,JSONPath=`.spec.instanceTypes`,priority=1
// +kubebuilder:printcolumn:name="Zones",type=string,JSONPath=`.spec.zones`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FakeNodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec FakeNodeClassSpec `json:"spec,omitempty"`
	// +optional
	Status NodeClassStatus `json:"status,omitempty"`
}

// FakeNodeClassSpec narrows and tunes the fake cloud. Empty: the whole catalogue with the
// cloud's physics and faults.
type FakeNodeClassSpec struct {
	// InstanceTypes the class may launch. Unset means the whole fake catalogue.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=500
	// +kubebuilder:validation:items:MaxLength=63
	InstanceTypes []string `json:"instanceTypes,omitempty"`

	// Zones the class may launch in. Unset means every zone of the fake region.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	Zones []string `json:"zones,omitempty"`

	// Hibernate makes standby nodes hibernate instead of stopping, as an EC2NodeClass
	// may: a start then resumes the node (the cloud's hibernate physics) instead of
	// booting it. Defaults to false.
	// +optional
	Hibernate bool `json:"hibernate,omitempty"`

	// Physics overrides the cloud's timings for instances of this class. Unset: the
	// cloud's timings.
	// +optional
	Physics *FakePhysics `json:"physics,omitempty"`

	// Faults adds faults for instances of this class to those of the cloud. Unset: none.
	// +optional
	Faults *FakeFaults `json:"faults,omitempty"`
}

// FakePhysics overrides the fake cloud's timings. Unset fields keep the cloud's values,
// whose defaults docs/fake-cloud.md lists with their sources.
type FakePhysics struct {
	// LaunchDelay: from the launch call to a running instance. Unset: the cloud's (10s).
	// +optional
	LaunchDelay *Duration `json:"launchDelay,omitempty"`
	// BootDelay: from a running instance to its Node registered. Unset: the cloud's (20s).
	// +optional
	BootDelay *Duration `json:"bootDelay,omitempty"`
	// ReadyDelay: from registration to the Node Ready and its network up. Unset: the
	// cloud's (10s).
	// +optional
	ReadyDelay *Duration `json:"readyDelay,omitempty"`
	// StartDelay: from the start call to a running instance. Unset: the cloud's (8s).
	// +optional
	StartDelay *Duration `json:"startDelay,omitempty"`
	// ResumeDelay: from a started instance running to its Node Ready again. Unset: the
	// cloud's (5s).
	// +optional
	ResumeDelay *Duration `json:"resumeDelay,omitempty"`
	// StopDelay: from the stop call to a stopped instance. Unset: the cloud's (20s).
	// +optional
	StopDelay *Duration `json:"stopDelay,omitempty"`
	// HibernateDelay: from a hibernating stop call to a stopped instance, the memory
	// written to the root volume. Unset: the cloud's (30s).
	// +optional
	HibernateDelay *Duration `json:"hibernateDelay,omitempty"`
	// HibernateResumeDelay: from a hibernated instance running again to its Node Ready,
	// the memory read back. Unset: the cloud's (4s).
	// +optional
	HibernateResumeDelay *Duration `json:"hibernateResumeDelay,omitempty"`
	// TerminateDelay: from the terminate call to a terminated instance. Unset: the
	// cloud's (15s).
	// +optional
	TerminateDelay *Duration `json:"terminateDelay,omitempty"`
	// ImagePullDelay: the time to pull one image a pod on the node needs; a node pulls
	// one image at a time. Unset: the cloud's (5s).
	// +optional
	ImagePullDelay *Duration `json:"imagePullDelay,omitempty"`
	// JitterPercent spreads every delay uniformly by up to this share, from a seeded
	// source. Unset: the cloud's (10).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	JitterPercent *int32 `json:"jitterPercent,omitempty"`
}

// FakeOperation is a call of the cloud-provider interface.
// +kubebuilder:validation:Enum=Create;Start;Stop;Terminate;Get;List
type FakeOperation string

// FakeErrorKind is the kind of error an injected fault returns.
// +kubebuilder:validation:Enum=Throttled;InsufficientCapacity;QuotaExceeded;Internal
type FakeErrorKind string

// FakeFaults are injected failures.
type FakeFaults struct {
	// Errors make a share of the calls of an operation fail. Unset: none.
	// +optional
	// +listType=map
	// +listMapKey=operation
	// +kubebuilder:validation:MaxItems=6
	Errors []FakeOperationFault `json:"errors,omitempty"`

	// InsufficientCapacity lists offerings that are out of capacity: a launch that could
	// only use them fails with an insufficient-capacity error. Unset: none.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	InsufficientCapacity []FakeOffering `json:"insufficientCapacity,omitempty"`

	// NeverRegisterPercent is the share of launched instances whose kubelet never
	// registers a Node. Defaults to 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	NeverRegisterPercent int32 `json:"neverRegisterPercent,omitempty"`

	// ImagePullErrors lists images whose every pull fails on the class's nodes, as a
	// missing image or a registry refusing the pull would: a container that needs one
	// waits with ErrImagePull. Unset: every pull succeeds.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ImagePullErrors []string `json:"imagePullErrors,omitempty"`
}

// FakeOperationFault fails a share of one operation's calls.
type FakeOperationFault struct {
	// Operation whose calls fail.
	// +required
	Operation FakeOperation `json:"operation"`
	// Percent of the calls that fail, from 0 to 100.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Percent int32 `json:"percent"`
	// Error the failing calls return. Defaults to Internal.
	// +optional
	// +kubebuilder:default=Internal
	Error FakeErrorKind `json:"error,omitempty"`
}

// FakeOffering names an instance type in a zone; an unset field matches any.
//
// +kubebuilder:validation:XValidation:rule="has(self.instanceType) || has(self.zone)",message="an offering needs an instanceType, a zone or both"
type FakeOffering struct {
	// InstanceType out of capacity; unset means every type.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	InstanceType string `json:"instanceType,omitempty"`
	// Zone out of capacity; unset means every zone.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Zone string `json:"zone,omitempty"`
}

// NodeClassStatus is what Stratos resolved of a node class.
type NodeClassStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready when the class resolved and can launch.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// FakeNodeClassList is a list of FakeNodeClasses.
//
// +kubebuilder:object:root=true
type FakeNodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FakeNodeClass `json:"items"`
}

// Operations of the cloud-provider interface that faults can target.
const (
	FakeOperationCreate    FakeOperation = "Create"
	FakeOperationStart     FakeOperation = "Start"
	FakeOperationStop      FakeOperation = "Stop"
	FakeOperationTerminate FakeOperation = "Terminate"
	FakeOperationGet       FakeOperation = "Get"
	FakeOperationList      FakeOperation = "List"
)

// Kinds of injected errors.
const (
	FakeErrorThrottled            FakeErrorKind = "Throttled"
	FakeErrorInsufficientCapacity FakeErrorKind = "InsufficientCapacity"
	FakeErrorQuotaExceeded        FakeErrorKind = "QuotaExceeded"
	FakeErrorInternal             FakeErrorKind = "Internal"
)

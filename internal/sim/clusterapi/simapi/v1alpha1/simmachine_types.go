package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// SimMachine is a simulated machine (CAPI's InfraMachine contract): an instance of the
// fake cloud, of the type its node.kubernetes.io/instance-type label names, whose
// kubelet registers the Node with the machine's provider ID. spec.online is the power
// wish and status.poweredOn the fact, as on Metal3's BareMetalHost: a machine switched
// off keeps its instance (stopped) and its Node.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simmachines,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:printcolumn:name="Instance",type=string,JSONPath=`.status.instanceID`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.instanceState`
// +kubebuilder:printcolumn:name="Online",type=boolean,JSONPath=`.spec.online`
// +kubebuilder:printcolumn:name="PoweredOn",type=boolean,JSONPath=`.status.poweredOn`
// +kubebuilder:printcolumn:name="ProviderID",type=string,JSONPath=`.spec.providerID`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SimMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SimMachineSpec   `json:"spec,omitempty"`
	Status SimMachineStatus `json:"status,omitempty"`
}

// SimMachineSpec is the desired machine.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.providerID) || (has(self.providerID) && self.providerID == oldSelf.providerID)",message="providerID cannot change once set"
type SimMachineSpec struct {
	// providerID is the provider ID of the machine's instance, as its Node carries it;
	// the controller sets it when it launches the instance.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// failureDomain is the zone to launch in when the machine has no
	// topology.kubernetes.io/zone label and its Machine names no failure domain.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// online is whether the machine should be powered on: false stops its instance,
	// true starts it again. Defaults to true.
	// +optional
	// +kubebuilder:default=true
	Online *bool `json:"online,omitempty"`
}

// SimMachineStatus is what the simulator reports of a machine.
type SimMachineStatus struct {
	// initialization reports the machine's provisioning, as CAPI's contract reads it:
	// provisioned once its instance first ran.
	// +optional
	Initialization SimMachineInitializationStatus `json:"initialization,omitempty,omitzero"`

	// instanceID is the fake cloud's instance of the machine.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	InstanceID string `json:"instanceID,omitempty"`

	// instanceState is the instance's state as the fake cloud last reported it
	// (pending, running, stopping, stopped, shutting-down, terminated).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	InstanceState string `json:"instanceState,omitempty"`

	// poweredOn is the fact of the machine's power: true while the instance runs and
	// until a stop has ended (stopping), false while it boots (pending) and once stopped.
	// +optional
	PoweredOn bool `json:"poweredOn"`

	// failureDomain is the zone the instance runs in.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// addresses are the instance's addresses: its private IP and host name.
	// +optional
	Addresses clusterv1.MachineAddresses `json:"addresses,omitempty"`

	// observedGeneration is the generation the status is for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready (mirrored by CAPI into the Machine's InfrastructureReady), with
	// a reason when the machine cannot launch or its instance vanished.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SimMachineInitializationStatus reports the machine's provisioning.
// +kubebuilder:validation:MinProperties=1
type SimMachineInitializationStatus struct {
	// provisioned is true once the machine's instance first ran.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// +kubebuilder:object:root=true

// SimMachineList is a list of SimMachines.
type SimMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimMachine `json:"items"`
}

// SimMachineTemplate is what SimMachines are made from (CAPI's InfraMachineTemplate
// contract), as a ClusterAPINodeClass or a MachineDeployment names it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simmachinetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
type SimMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec SimMachineTemplateSpec `json:"spec,omitempty"`
}

// SimMachineTemplateSpec holds the template.
type SimMachineTemplateSpec struct {
	// template is the SimMachine made from the template.
	// +required
	Template SimMachineTemplateResource `json:"template"`
}

// SimMachineTemplateResource is the metadata and spec of SimMachines made from a template.
type SimMachineTemplateResource struct {
	// metadata is given to the SimMachines made from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the spec of the SimMachines made from the template.
	// +optional
	Spec SimMachineSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// SimMachineTemplateList is a list of SimMachineTemplates.
type SimMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimMachineTemplate `json:"items"`
}

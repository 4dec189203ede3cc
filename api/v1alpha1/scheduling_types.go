package v1alpha1

import corev1 "k8s.io/api/core/v1"

// NodeSelectorRequirement constrains one well-known node label of the nodes a pool may
// launch: the instance type, the zone, the architecture or the capacity type. It has the
// semantics of a Kubernetes node-selector requirement; Stratos keeps its own type so the
// API server can check the key, the operator and the values before anything is launched.
//
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",message="values must be non-empty for the In and NotIn operators and empty for Exists and DoesNotExist"
// +kubebuilder:validation:XValidation:rule="self.key != 'kubernetes.io/arch' || !has(self.values) || self.values.all(v, v in ['amd64', 'arm64'])",message="kubernetes.io/arch values must be amd64 or arm64"
// +kubebuilder:validation:XValidation:rule="self.key != 'stratos.sh/capacity-type' || !has(self.values) || self.values.all(v, v in ['on-demand', 'spot'])",message="stratos.sh/capacity-type values must be on-demand or spot"
type NodeSelectorRequirement struct {
	// Key is the node label constrained: node.kubernetes.io/instance-type,
	// topology.kubernetes.io/zone, kubernetes.io/arch or stratos.sh/capacity-type.
	// +required
	// +kubebuilder:validation:Enum=node.kubernetes.io/instance-type;topology.kubernetes.io/zone;kubernetes.io/arch;stratos.sh/capacity-type
	Key string `json:"key"`

	// Operator relates the key to the values: In, NotIn, Exists or DoesNotExist.
	// +required
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator corev1.NodeSelectorOperator `json:"operator"`

	// Values for In and NotIn; none (unset) for Exists and DoesNotExist. Each value
	// appears once.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=63
	Values []string `json:"values,omitempty"`
}

// Core returns the requirement as a Kubernetes node-selector requirement, for the
// scheduling helpers of k8s.io/component-helpers.
func (r NodeSelectorRequirement) Core() corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values}
}

// Taint is a Kubernetes taint without the time it was added, which only the node
// lifecycle controller sets.
//
// +kubebuilder:validation:XValidation:rule="!self.key.startsWith('stratos.sh/')",message="taint keys under stratos.sh/ are reserved for Stratos"
type Taint struct {
	// Key is a qualified name such as example.com/dedicated.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="taint key must be a qualified name such as example.com/dedicated"
	Key string `json:"key"`

	// Value of the taint; empty by default.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="size(self) == 0 || self.matches('^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="taint value must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	Value string `json:"value,omitempty"`

	// Effect on pods that do not tolerate the taint: NoSchedule, PreferNoSchedule or NoExecute.
	// +required
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect"`
}

// Core returns the taint as a Kubernetes taint.
func (t Taint) Core() corev1.Taint {
	return corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
}

// NodeClassReference points at the cloud-specific node class a pool launches with.
type NodeClassReference struct {
	// Group of the node class. Defaults to stratos.sh.
	// +optional
	// +kubebuilder:default=stratos.sh
	// +kubebuilder:validation:Enum=stratos.sh
	Group string `json:"group,omitempty"`

	// Kind of the node class: FakeNodeClass or AWSNodeClass.
	// +required
	// +kubebuilder:validation:Enum=FakeNodeClass;AWSNodeClass
	Kind string `json:"kind"`

	// Name of the node class (node classes are cluster-scoped).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="name must be a lowercase DNS subdomain such as default or gpu.large"
	Name string `json:"name"`
}

// LabelValue is the value of a Kubernetes label: at most 63 letters, digits, '-', '_' or
// '.', starting and ending with a letter or digit, or empty.
//
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule="size(self) == 0 || self.matches('^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="label values must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
type LabelValue string

// CoreRequirements returns requirements as Kubernetes node-selector requirements, the
// form the node-affinity helpers of k8s.io/component-helpers match nodes with.
func CoreRequirements(requirements []NodeSelectorRequirement) []corev1.NodeSelectorRequirement {
	out := make([]corev1.NodeSelectorRequirement, 0, len(requirements))
	for _, r := range requirements {
		out = append(out, r.Core())
	}
	return out
}

package v1beta1

import corev1 "k8s.io/api/core/v1"

// NodeSelectorRequirement constrains one well-known node label of the nodes a pool may
// launch: the instance type, the zone, the architecture, the capacity type, or one of
// the instance labels (family, category, generation, size, vCPUs, memory, GPUs,
// hypervisor, network bandwidth). It has the semantics of a Kubernetes node-selector
// requirement; Stratos keeps its own type so the API server can check the key, the
// operator and the values before anything is launched, and to carry minValues.
//
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (self.operator in ['Gt', 'Lt'] || !has(self.values) || size(self.values) == 0)",message="values must be non-empty for the In and NotIn operators and empty for Exists and DoesNotExist"
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Gt', 'Lt']) || (has(self.values) && size(self.values) == 1)",message="Gt and Lt take exactly one value, a whole number"
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Gt', 'Lt']) || self.key in ['stratos.sh/instance-generation', 'stratos.sh/instance-cpu', 'stratos.sh/instance-memory', 'stratos.sh/instance-gpu-count', 'stratos.sh/instance-network-bandwidth']",message="Gt and Lt apply only to the numeric keys: stratos.sh/instance-generation, -cpu, -memory, -gpu-count and -network-bandwidth"
// +kubebuilder:validation:XValidation:rule="!(self.key in ['stratos.sh/instance-generation', 'stratos.sh/instance-cpu', 'stratos.sh/instance-memory', 'stratos.sh/instance-gpu-count', 'stratos.sh/instance-network-bandwidth']) || !has(self.values) || self.values.all(v, v.matches('^[0-9]{1,18}$'))",message="the values of stratos.sh/instance-generation, -cpu, -memory, -gpu-count and -network-bandwidth are whole numbers such as 4"
// +kubebuilder:validation:XValidation:rule="self.key != 'kubernetes.io/arch' || !has(self.values) || self.values.all(v, v in ['amd64', 'arm64'])",message="kubernetes.io/arch values must be amd64 or arm64"
// +kubebuilder:validation:XValidation:rule="self.key != 'kubernetes.io/os' || !has(self.values) || self.values.all(v, v in ['linux', 'windows'])",message="kubernetes.io/os values must be linux or windows"
// +kubebuilder:validation:XValidation:rule="self.key != 'stratos.sh/capacity-type' || !has(self.values) || self.values.all(v, v in ['on-demand', 'spot'])",message="stratos.sh/capacity-type values must be on-demand or spot"
// +kubebuilder:validation:XValidation:rule="!has(self.minValues) || self.operator != 'DoesNotExist'",message="minValues cannot go with DoesNotExist: a label that is absent has no values to choose among"
// +kubebuilder:validation:XValidation:rule="!has(self.minValues) || self.operator != 'In' || size(self.values) >= self.minValues",message="minValues cannot exceed the number of values of an In requirement"
// +kubebuilder:validation:XValidation:rule="!has(self.minValues) || !(self.key in ['topology.kubernetes.io/zone', 'stratos.sh/capacity-type'])",message="minValues applies to what the instance type is, not to the zone or the capacity type: a node is bought in one zone and one capacity type"
type NodeSelectorRequirement struct {
	// Key is the node label constrained: node.kubernetes.io/instance-type,
	// topology.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/os (every node
	// Stratos launches is linux), stratos.sh/capacity-type, or an
	// instance label: stratos.sh/instance-family, -category, -generation, -size, -cpu,
	// -memory (MiB), -gpu-count, -gpu-name, -hypervisor or -network-bandwidth (Mbps).
	// +required
	// +kubebuilder:validation:Enum=node.kubernetes.io/instance-type;topology.kubernetes.io/zone;kubernetes.io/arch;kubernetes.io/os;stratos.sh/capacity-type;stratos.sh/instance-family;stratos.sh/instance-category;stratos.sh/instance-generation;stratos.sh/instance-size;stratos.sh/instance-cpu;stratos.sh/instance-memory;stratos.sh/instance-gpu-count;stratos.sh/instance-gpu-name;stratos.sh/instance-hypervisor;stratos.sh/instance-network-bandwidth
	Key string `json:"key"`

	// Operator relates the key to the values: In, NotIn, Exists, DoesNotExist, or, for
	// the numeric instance labels, Gt and Lt (greater and less than the one value).
	// +required
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt
	Operator corev1.NodeSelectorOperator `json:"operator"`

	// Values for In and NotIn; exactly one whole number for Gt and Lt; none (unset) for
	// Exists and DoesNotExist. Each value appears once.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=63
	Values []string `json:"values,omitempty"`

	// MinValues is a flexibility floor: a new node's launch must remain free to choose
	// among instance types with at least this many distinct values of the key, such as
	// five instance families, so that one type's shortage of capacity does not stop it.
	// A node the pods on it would narrow below the floor is not made; the pods wait,
	// and their Event says why. Not for the zone or the capacity type. Unset: no floor.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	MinValues *int32 `json:"minValues,omitempty"`
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
	// +kubebuilder:validation:XValidation:rule="self.contains('/') ? (self.indexOf('/') <= 253 && size(self) - self.indexOf('/') - 1 <= 63) : size(self) <= 63",message="taint key must have a name of at most 63 characters after a prefix of at most 253"
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

	// Kind of the node class: FakeNodeClass, EC2NodeClass or ClusterAPINodeClass.
	// +required
	// +kubebuilder:validation:Enum=FakeNodeClass;EC2NodeClass;ClusterAPINodeClass
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

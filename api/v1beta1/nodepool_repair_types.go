package v1beta1

// DefaultNotReadyToleration is how long a node's Ready condition may be False or Unknown
// before node repair replaces it, as Karpenter's node repair tolerates a NotReady node.
const DefaultNotReadyToleration = "30m"

// Repair replaces the pool's nodes that stopped being healthy, from standby when the
// pool has a standby node. At most 20% of the pool's nodes (at least one) are repaired
// at once, and none while more than half of them are unhealthy: that is an outage to
// report, not nodes to replace.
type Repair struct {
	// Enabled turns node repair on. Defaults to true.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`

	// NotReadyAfter is how long a node's Ready condition may be False or Unknown before
	// the node is replaced. Defaults to 30m.
	// +optional
	// +kubebuilder:default="30m"
	NotReadyAfter *Duration `json:"notReadyAfter,omitempty"`

	// Conditions are further node conditions that make a node unhealthy once they have
	// held for their toleration, such as those node-problem-detector reports
	// (KernelDeadlock True, ReadonlyFilesystem True). Unset: only Ready counts.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []RepairCondition `json:"conditions,omitempty"`
}

// RepairCondition is a node condition that marks a node unhealthy.
type RepairCondition struct {
	// Type of the node condition, such as KernelDeadlock.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="self != 'Ready'",message="Ready is covered by notReadyAfter"
	Type string `json:"type"`

	// Status that makes the node unhealthy: True, False or Unknown.
	// +required
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status string `json:"status"`

	// After is how long the condition must hold before the node is replaced.
	// +required
	After Duration `json:"after"`
}

// RepairEnabled reports whether the pool repairs its nodes.
func (r Repair) RepairEnabled() bool { return r.Enabled == nil || *r.Enabled }

package v1beta1

// DefaultNotReadyToleration is how long a node's Ready condition may be False or Unknown
// before node repair replaces it, as Karpenter's node repair tolerates a NotReady node.
const DefaultNotReadyToleration = "30m"

// Repair replaces the pool's nodes that stopped being healthy, from standby when the
// pool has a standby node. Only running nodes are judged (claims Running or Draining):
// a standby node is NotReady by design. At most 20% of the pool's running nodes (at
// least one) are repaired at once, and none while more than half of them are unhealthy:
// that is an outage to report (the pool's Degraded condition, reason NodesUnhealthy),
// not nodes to replace.
type Repair struct {
	// Enabled turns node repair on. Defaults to true. Off, no claim of the pool is marked
	// Unhealthy, and one marked before is marked False again.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`

	// NotReadyAfter is how long a running node's Ready condition may be False or Unknown,
	// counted from the condition's last transition, before its claim is marked Unhealthy
	// (reason NotReady) and the node replaced. A Node that never reported Ready is left to
	// the registration and initialization timeouts. Defaults to 30m.
	// +optional
	// +kubebuilder:default="30m"
	NotReadyAfter *Duration `json:"notReadyAfter,omitempty"`

	// Conditions are further node conditions that make a node unhealthy once they have
	// held for their toleration (counted from the condition's last transition), such as
	// those node-problem-detector reports (KernelDeadlock True, ReadonlyFilesystem True);
	// the claim's Unhealthy condition then gives the condition's type as its reason (any
	// character a condition reason may not hold, such as . / -, replaced by _).
	// Unset: only Ready counts.
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

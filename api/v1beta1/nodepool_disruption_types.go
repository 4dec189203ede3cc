package v1beta1

// ConsolidationPolicy says which running nodes are candidates to be given back.
// +kubebuilder:validation:Enum=WhenEmpty;WhenEmptyOrUnderutilized
type ConsolidationPolicy string

const (
	// ConsolidationWhenEmpty gives back nodes that run no pods but DaemonSet and mirror pods.
	ConsolidationWhenEmpty ConsolidationPolicy = "WhenEmpty"
	// ConsolidationWhenEmptyOrUnderutilized also gives back nodes whose pods fit elsewhere.
	ConsolidationWhenEmptyOrUnderutilized ConsolidationPolicy = "WhenEmptyOrUnderutilized"
)

// DisruptionReason is why a node is disrupted. The reasons a budget may name are the
// voluntary ones: Empty, Underutilized, Drifted, Expired and Rebalance.
// +kubebuilder:validation:Enum=Empty;Underutilized;Drifted;Expired;Rebalance
type DisruptionReason string

const (
	DisruptionEmpty         DisruptionReason = "Empty"
	DisruptionUnderutilized DisruptionReason = "Underutilized"
	DisruptionDrifted       DisruptionReason = "Drifted"
	DisruptionExpired       DisruptionReason = "Expired"
	// DisruptionRebalance replaces a node whose instance the cloud recommends to
	// rebalance (an EC2 rebalance recommendation), in a pool whose
	// rebalanceRecommendation is Replace; budgets apply.
	DisruptionRebalance DisruptionReason = "Rebalance"
	// DisruptionInterrupted replaces a node whose instance the cloud is taking away (a
	// spot interruption warning, a scheduled change). It is involuntary: budgets do not
	// apply and no budget may name it.
	DisruptionInterrupted DisruptionReason = "Interrupted"
	// DisruptionUnhealthy replaces a node that stopped being healthy (node repair). It
	// is involuntary: the pool's repair limits apply, not its budgets, and no budget may
	// name it.
	DisruptionUnhealthy DisruptionReason = "Unhealthy"
)

// RebalancePolicy says what a rebalance recommendation does to a node.
// +kubebuilder:validation:Enum=Ignore;Replace
type RebalancePolicy string

const (
	// RebalanceIgnore leaves the node as it is; an interruption warning, if one follows,
	// is handled then.
	RebalanceIgnore RebalancePolicy = "Ignore"
	// RebalanceReplace replaces the node ahead of an interruption, replacement first and
	// within the pool's disruption budgets (reason Rebalance).
	RebalanceReplace RebalancePolicy = "Replace"
)

// Disruption says when and how a pool's nodes are given back or replaced.
type Disruption struct {
	// ConsolidationPolicy: WhenEmpty or WhenEmptyOrUnderutilized. Defaults to WhenEmpty.
	// +optional
	// +kubebuilder:default=WhenEmpty
	ConsolidationPolicy ConsolidationPolicy `json:"consolidationPolicy,omitempty"`

	// ConsolidateAfter is how long a node's pods must stay the same (none, for an empty
	// node) before it is given back. Defaults to 30s.
	// +optional
	// +kubebuilder:default="30s"
	ConsolidateAfter *Duration `json:"consolidateAfter,omitempty"`

	// Budgets cap how many of the pool's nodes may be disrupted at once, and how many
	// stale standby nodes are replaced at once (by the budget for their reason,
	// Drifted or Expired; 0 for Drifted freezes a rollout). The most restrictive active
	// budget applies. Defaults to one budget of 10%.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:default={{nodes: "10%"}}
	Budgets []Budget `json:"budgets,omitempty"`

	// RebalanceRecommendation says what the cloud's recommendation to move off an
	// instance at elevated risk of interruption (EC2's rebalance recommendation) does:
	// Ignore, or Replace the node ahead of time, replacement first, within the budgets.
	// Defaults to Ignore.
	// +optional
	// +kubebuilder:default=Ignore
	RebalanceRecommendation RebalancePolicy `json:"rebalanceRecommendation,omitempty"`
}

// Budget caps voluntary disruption, always or during a cron schedule.
//
// +kubebuilder:validation:XValidation:rule="has(self.schedule) == has(self.duration)",message="schedule and duration must be set together"
// +kubebuilder:validation:XValidation:rule="!has(self.timeZone) || has(self.schedule)",message="timeZone needs a schedule"
type Budget struct {
	// Nodes is how many nodes may be disrupted at once: a count such as 2, or a
	// percentage of the pool's running nodes such as 10%, rounded up (10% of 5 nodes is 1).
	// For stale standby nodes it is how many replacements warm up at once, a percentage
	// taken of the warm pool's target.
	// +required
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]|[1-9][0-9]|100)%|[0-9]+)$')",message="nodes must be a count such as 3 or a percentage from 0% to 100%"
	Nodes string `json:"nodes"`

	// Schedule is a cron expression (minute hour day-of-month month day-of-week, or a
	// macro such as @daily) at which the budget becomes active for duration. Unset means
	// always active. A schedule that never fires (such as 0 0 30 2 *, the 30th of
	// February) makes the budget never active; the pool's BudgetsValid condition says
	// so. A schedule or time zone Stratos cannot read stops every disruption of the pool
	// until it is fixed, with the same condition.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+)$')",message="schedule must be a cron expression with five fields, such as '0 9 * * mon-fri', or a macro such as @daily"
	Schedule *string `json:"schedule,omitempty"`

	// Duration the budget stays active after each scheduled time. Unset unless schedule is set.
	// +optional
	Duration *Duration `json:"duration,omitempty"`

	// TimeZone of the schedule, an IANA name such as Europe/Berlin. Defaults to UTC.
	// +optional
	TimeZone *TimeZone `json:"timeZone,omitempty"`

	// Reasons the budget applies to. Unset means every reason.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=5
	Reasons []DisruptionReason `json:"reasons,omitempty"`
}

// TimeZone is an IANA time-zone name such as UTC or America/New_York. Stratos embeds the
// time-zone database, so a name that passes this check but is unknown is reported on the
// pool's status.
//
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule="self != 'Local' && self.matches('^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$')",message="time zone must be an IANA name such as UTC or Europe/Berlin"
type TimeZone string

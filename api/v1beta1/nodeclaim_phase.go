package v1beta1

// NodeClaimPhase is where a claim is in its life:
//
//	cold path:  Launching → Registering → Initializing → Running
//	warm path:  Launching → Registering → Initializing → WarmingUp → Stopping → Standby
//	on demand:  Standby → Starting → Running
//	give back:  Running → Draining → Stopping → Standby
//	drain away: Running → Draining → Terminating  (desiredState Terminated: deleted once drained)
//	remove:     any → Terminating
//
// +kubebuilder:validation:Enum=Launching;Registering;Initializing;WarmingUp;Stopping;Standby;Starting;Running;Draining;Terminating
type NodeClaimPhase string

const (
	PhaseLaunching    NodeClaimPhase = "Launching"
	PhaseRegistering  NodeClaimPhase = "Registering"
	PhaseInitializing NodeClaimPhase = "Initializing"
	PhaseWarmingUp    NodeClaimPhase = "WarmingUp"
	PhaseStopping     NodeClaimPhase = "Stopping"
	PhaseStandby      NodeClaimPhase = "Standby"
	PhaseStarting     NodeClaimPhase = "Starting"
	PhaseRunning      NodeClaimPhase = "Running"
	PhaseDraining     NodeClaimPhase = "Draining"
	PhaseTerminating  NodeClaimPhase = "Terminating"
)

// Phases lists every phase in the order of a claim's life.
var Phases = []NodeClaimPhase{
	PhaseLaunching, PhaseRegistering, PhaseInitializing, PhaseWarmingUp, PhaseStopping,
	PhaseStandby, PhaseStarting, PhaseRunning, PhaseDraining, PhaseTerminating,
}

// Condition types of a NodeClaim.
const (
	ConditionLaunched    = "Launched"
	ConditionRegistered  = "Registered"
	ConditionInitialized = "Initialized"
	ConditionWarmedUp    = "WarmedUp"
	// ConditionStarted is False when the cloud refused the last start of the claim's
	// instance for lack of capacity or quota (the reason is the cloud's error code, such
	// as InsufficientCapacity) and the claim went back to standby; its
	// LastTransitionTime is the time of that refusal, renewed at each one. True once a
	// start is accepted, its LastTransitionTime then the time of the last accepted start.
	ConditionStarted        = "Started"
	ConditionDrifted        = "Drifted"
	ConditionEmpty          = "Empty"
	ConditionConsolidatable = "Consolidatable"
	// ConditionInstanceLost is True while the cloud does not answer for the claim's
	// instance as the cluster's and Stratos waits rather than take the instance for gone:
	// reason OwnershipLost when the instance exists without the cluster's
	// stratos.sh/cluster tag, InstancesVanished when the cloud does not find it, nor many
	// of its pool's other instances at the same look. Its LastTransitionTime is when that
	// was first seen. False, reason InstanceFound, once the cloud answers for it again.
	ConditionInstanceLost = "InstanceLost"
	// ConditionDisruptionBlocked is True while disruption would give back, remove or
	// replace the claim's node but keeps it, because a PodDisruptionBudget does not let
	// one of its pods be evicted now (reason PodDisruptionBudget, the message naming the
	// pod and the budget); False once it no longer does.
	ConditionDisruptionBlocked = "DisruptionBlocked"
	// ConditionInterrupted is True once the cloud gave notice that it takes the
	// instance away (reason SpotInterruption or ScheduledChange) or recommends moving
	// off it (reason RebalanceRecommendation); status.interruption holds the notice.
	ConditionInterrupted = "Interrupted"
	// ConditionUnhealthy is True while the claim's Node is unhealthy as its pool's
	// repair defines it (reason NotReady, or the node condition's type), and says
	// whether and when node repair replaces it.
	ConditionUnhealthy = "Unhealthy"
)

// Reasons of the InstanceLost condition; a NodePool's Degraded condition repeats them
// while one of its claims has it.
const (
	ReasonOwnershipLost     = "OwnershipLost"
	ReasonInstancesVanished = "InstancesVanished"
)

// ReasonAccountLimitExceeded is the reason of a claim's Launched condition when an
// account limit of the cloud (on EC2, a vCPU or instance quota) covers every offering
// the claim may launch now; its message names the limit. The claim's NodePool's
// Degraded condition repeats it while one of its claims waits so.
const ReasonAccountLimitExceeded = "AccountLimitExceeded"

// Condition types of a NodePool and of the node classes.
const (
	// ConditionReady: the pool meets its target, or the node class resolved.
	ConditionReady = "Ready"
	// ConditionDegraded: something keeps the pool from its target, or the cloud does not
	// answer for some of its instances as the cluster's; the reason says what.
	ConditionDegraded = "Degraded"
	// ConditionBudgetsValid: every disruption budget of the pool can be read and its
	// schedule fires; False says which does not and what Stratos does about it.
	ConditionBudgetsValid = "BudgetsValid"
	// ConditionWarmPoolSupported: False when the pool's node class cannot stand nodes by
	// (a ClusterAPINodeClass whose infrastructure Stratos cannot power off and on), so
	// the pool keeps no warm pool whatever its spec and windows ask; absent otherwise.
	ConditionWarmPoolSupported = "WarmPoolSupported"
)

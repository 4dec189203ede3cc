package podscope

// Presence is what one check for another autoscaler found.
type Presence int

const (
	// Unknown: the check failed (a timeout, a server error); it says nothing.
	Unknown Presence = iota
	// Absent: the API server answered that there is none.
	Absent
	// Present: another autoscaler's objects exist.
	Present
	// Forbidden: Stratos may not look (its role lacks the permission).
	Forbidden
)

// Findings are the checks of one round.
type Findings struct {
	// Karpenter is whether nodepools.karpenter.sh exist.
	Karpenter Presence
	// ClusterAutoscaler is whether Cluster Autoscaler's status ConfigMap exists.
	ClusterAutoscaler Presence
}

// Reasons for a scope, the reason label of stratos_pod_scope.
const (
	// ReasonFlag: --pod-scope named the scope.
	ReasonFlag = "flag"
	// ReasonStarting: auto, before the first check answered; Stratos serves opted-in
	// pods only rather than race another autoscaler it has not looked for yet.
	ReasonStarting = "starting"
	// ReasonKarpenter: auto found Karpenter NodePools.
	ReasonKarpenter = "karpenter"
	// ReasonClusterAutoscaler: auto found Cluster Autoscaler's status ConfigMap.
	ReasonClusterAutoscaler = "cluster-autoscaler"
	// ReasonNoneFound: auto found no other autoscaler.
	ReasonNoneFound = "none-found"
	// ReasonNotPermitted: auto found none where it may look, and may not look elsewhere.
	ReasonNotPermitted = "not-permitted"
)

// Decision is the scope in effect and why.
type Decision struct {
	Scope  Scope
	Reason string
}

// Decide returns the scope in effect under mode, given what this round's checks found
// and the decision before (zero before the first). Under auto another autoscaler found
// by either check makes the scope OptedIn. A failed check keeps the decision before, so
// that an API server's hiccup does not swing the scope to All and have both autoscalers
// launch for the same pods. A check Stratos may not make counts as finding nothing:
// its roles grant the checks, so a cluster that took them away chose to set the scope
// with the flag, and Stratos alone in a cluster must serve every pod.
func Decide(mode Scope, found Findings, before Decision) Decision {
	if mode != Auto {
		return Decision{Scope: mode, Reason: ReasonFlag}
	}
	switch {
	case found.Karpenter == Present:
		return Decision{Scope: OptedIn, Reason: ReasonKarpenter}
	case found.ClusterAutoscaler == Present:
		return Decision{Scope: OptedIn, Reason: ReasonClusterAutoscaler}
	case found.Karpenter == Unknown || found.ClusterAutoscaler == Unknown:
		if before.Scope == "" {
			return Decision{Scope: OptedIn, Reason: ReasonStarting}
		}
		return before
	case found.Karpenter == Forbidden || found.ClusterAutoscaler == Forbidden:
		return Decision{Scope: All, Reason: ReasonNotPermitted}
	}
	return Decision{Scope: All, Reason: ReasonNoneFound}
}

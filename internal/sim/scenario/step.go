package scenario

import (
	"fmt"

	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Step is one action; exactly one field other than description is set.
type Step struct {
	// Description is shown in the progress and the report; a default is derived.
	Description string `json:"description,omitempty"`

	// Wait polls a condition until it holds or the timeout passes (a failure).
	Wait *Wait `json:"wait,omitempty"`
	// Expect checks a condition once, now.
	Expect *Condition `json:"expect,omitempty"`
	// Sleep lets scenario time pass.
	Sleep *metav1.Duration `json:"sleep,omitempty"`
	// Mark names this moment, so that a later condition's since counts from it.
	Mark string `json:"mark,omitempty"`

	// Burst creates a Deployment of identical pods.
	Burst *Workload `json:"burst,omitempty"`
	// Scale sets the replicas of a Deployment a burst created.
	Scale *Scale `json:"scale,omitempty"`
	// Delete deletes a Deployment a burst created.
	Delete *WorkloadRef `json:"delete,omitempty"`
	// Apply creates or updates objects, as the scenario's objects are.
	Apply []unstructured.Unstructured `json:"apply,omitempty"`

	// RestartOperator stops the operator with SIGTERM and starts it again.
	RestartOperator *struct{} `json:"restartOperator,omitempty"`
	// KillOperator kills the operator with SIGKILL at a random moment and starts it
	// again; the step returns at once, so the kill lands during the steps that follow.
	KillOperator *Kill `json:"killOperator,omitempty"`

	// SetClock sets the clock the operator reads time windows on, such as
	// 2026-11-23T07:59:30+01:00; it runs on at the scenario's time scale from there.
	SetClock *metav1.Time `json:"setClock,omitempty"`

	// Faults replaces the cloud's injected faults; ClearFaults removes them all.
	Faults      *fakecloud.Faults `json:"faults,omitempty"`
	ClearFaults bool              `json:"clearFaults,omitempty"`

	// Interrupt has the cloud give notice about instances that hold workload pods: spot
	// interruptions, rebalance recommendations or scheduled changes.
	Interrupt *Interrupt `json:"interrupt,omitempty"`
	// Unhealthy makes the kubelets of Nodes that hold workload pods fail.
	Unhealthy *Unhealthy `json:"unhealthy,omitempty"`
}

// Wait is a condition with a timeout in scenario time.
type Wait struct {
	Condition `json:",inline"`
	Timeout   metav1.Duration `json:"timeout"`
}

// Condition is a conjunction: every field set must hold.
type Condition struct {
	// Since names a mark step: the counts that accumulate (SinceCounts) count from that
	// moment rather than from the scenario's start.
	Since string `json:"since,omitempty"`
	// PodsRunning counts the scenario's workload pods that are Running and Ready.
	PodsRunning *Count `json:"podsRunning,omitempty"`
	// PodsPending counts the workload pods not yet Running and Ready.
	PodsPending *Count `json:"podsPending,omitempty"`
	// ReadyNodes counts Nodes whose Ready condition is True and that are schedulable.
	ReadyNodes *Count `json:"readyNodes,omitempty"`
	// Claims counts NodeClaims by phase, optionally of one pool.
	Claims []ClaimCount `json:"claims,omitempty"`
	// StartedFromStandby, TakenWhileWarming and LaunchedCold count, since the scenario
	// began, standby claims asked to run, claims launched for standby asked to run
	// before their warmup ended, and claims created to run pods.
	StartedFromStandby *Count `json:"startedFromStandby,omitempty"`
	TakenWhileWarming  *Count `json:"takenWhileWarming,omitempty"`
	LaunchedCold       *Count `json:"launchedCold,omitempty"`
	// Evictions counts, since the scenario began, the pods the operator evicted.
	Evictions *Count `json:"evictions,omitempty"`
	// PodLatencyP99 and PodLatencyMax bound, in scenario seconds rounded up, the time
	// from creation to Running and Ready of the scenario's pods that run so far.
	PodLatencyP99 *Count `json:"podLatencyP99,omitempty"`
	PodLatencyMax *Count `json:"podLatencyMax,omitempty"`
	// PodEvents counts the scenario's pods that have an Event with a reason, such as
	// NoNodePoolFits.
	PodEvents []EventCount `json:"podEvents,omitempty"`
	// PodsServed counts the scenario's running pods by how they were served: standby,
	// cold or existing, as the report's pods.byPath.
	PodsServed []ServedCount `json:"podsServed,omitempty"`
	// BufferConditions counts the CapacityBuffers whose condition of a type has a
	// status, such as Provisioning True.
	BufferConditions []BufferConditionCount `json:"bufferConditions,omitempty"`
	// DaemonSetPodsOnStandby counts DaemonSet pods bound to the Nodes of standby claims,
	// which keep them while their instances are stopped.
	DaemonSetPodsOnStandby *Count `json:"daemonSetPodsOnStandby,omitempty"`
	// DaemonSetPodsDeleted counts, since the scenario began, the DaemonSet pods deleted
	// by anyone: evicted, or removed with their Node.
	DaemonSetPodsDeleted *Count `json:"daemonSetPodsDeleted,omitempty"`
	// Nodes counts the Nodes that show what a pool registers them with.
	Nodes []NodeCount `json:"nodes,omitempty"`
	// PoolConditions counts the NodePools whose condition of a type is True, with a
	// reason when one is given, such as Degraded for WarmupFailing.
	PoolConditions []PoolConditionCount `json:"poolConditions,omitempty"`

	// PodsDisplaced counts, since the scenario began, the workload pods that were on
	// the Nodes of instances given notice by interrupt steps, or made unhealthy by
	// unhealthy steps, at that moment.
	PodsDisplaced *Count `json:"podsDisplaced,omitempty"`
	// PodsAwaitingReplacement counts the displaced pods whose owner has no replacement
	// for them yet: a pod of the same workload Running and Ready on another Node since
	// the notice (the k-th displaced pod of a workload is matched with the k-th
	// replacement to turn Ready).
	PodsAwaitingReplacement *Count `json:"podsAwaitingReplacement,omitempty"`
	// PodsKilledByInterruption counts the displaced pods still bound to their Node, and
	// not being deleted, when their instance was taken away.
	PodsKilledByInterruption *Count `json:"podsKilledByInterruption,omitempty"`
	// InterruptionRecoveryP99 and InterruptionRecoveryMax bound, in scenario seconds
	// rounded up, the time from an interruption's notice to the displaced pod's
	// replacement Running and Ready, over the pods replaced so far.
	InterruptionRecoveryP99 *Count `json:"interruptionRecoveryP99,omitempty"`
	InterruptionRecoveryMax *Count `json:"interruptionRecoveryMax,omitempty"`
	// RepairRecoveryMax bounds the same from a Node turning unhealthy.
	RepairRecoveryMax *Count `json:"repairRecoveryMax,omitempty"`

	// WorkloadLatency bounds a percentile of the latencies of one burst's pods that run
	// so far, in scenario seconds rounded up: one phase of a scenario's load alone.
	WorkloadLatency []WorkloadLatency `json:"workloadLatency,omitempty"`
	// StandbyNodeHours bounds a pool's standby node-hours so far (as the report's
	// standby figures), rounded up to whole node-hours.
	StandbyNodeHours []PoolCount `json:"standbyNodeHours,omitempty"`
	// StandbyTarget bounds the standby nodes a pool aims for now (its
	// status.standbyTarget): standby.min, a window's, or the learned target.
	StandbyTarget []PoolCount `json:"standbyTarget,omitempty"`

	// The scale bounds (see ScaleCounts) read the operator's memory, metrics and writes
	// so far, and its cloud calls.
	ScaleCounts `json:",inline"`
}

// WorkloadLatency bounds a percentile (50, 90, 99 or 100 for the maximum) of the
// creation→Running latencies of a burst's pods.
type WorkloadLatency struct {
	WorkloadRef `json:",inline"`
	Percentile  int `json:"percentile"`
	Count       `json:",inline"`
}

// Percentiles are those a workloadLatency condition may bound: the report's.
var Percentiles = []int{50, 90, 99, 100}

// PoolCount bounds a figure of one pool.
type PoolCount struct {
	Pool  string `json:"pool"`
	Count `json:",inline"`
}

// PoolConditionCount counts the NodePools, one by name or all, whose condition Type is
// True, with Reason when it is set.
type PoolConditionCount struct {
	Pool   string `json:"pool,omitempty"`
	Type   string `json:"type"`
	Reason string `json:"reason,omitempty"`
	Count  `json:",inline"`
}

// NodeCount counts the Nodes, of one pool (by their stratos.sh/nodepool label) or all,
// that carry every label and taint given (key, value and effect) and report every
// capacity and allocatable quantity given, exactly.
type NodeCount struct {
	Pool string `json:"pool,omitempty"`
	// CapacityType counts the Nodes of one capacity type (their
	// stratos.sh/capacity-type label); empty: any.
	CapacityType string              `json:"capacityType,omitempty"`
	Labels       map[string]string   `json:"labels,omitempty"`
	Taints       []corev1.Taint      `json:"taints,omitempty"`
	Capacity     corev1.ResourceList `json:"capacity,omitempty"`
	Allocatable  corev1.ResourceList `json:"allocatable,omitempty"`
	Count        `json:",inline"`
}

// EventCount counts the scenario's pods that have at least one Event with Reason.
type EventCount struct {
	Reason string `json:"reason"`
	Count  `json:",inline"`
}

// NamedCount is one count of a condition, named as in the scenario file.
type NamedCount struct {
	// Name is the field's name, such as podsRunning.
	Name string
	// Want bounds the count.
	Want *Count
	// Claims is set for a claims entry, Event for a podEvents entry, Nodes for a nodes
	// entry.
	Claims *ClaimCount
	Event  *EventCount
	Nodes  *NodeCount
	// PoolCondition is set for a poolConditions entry.
	PoolCondition *PoolConditionCount
	// Served is set for a podsServed entry, BufferCondition for a bufferConditions
	// entry.
	Served          *ServedCount
	BufferCondition *BufferConditionCount
	// Latency is set for a workloadLatency entry, StandbyHours for a standbyNodeHours
	// entry, StandbyTarget for a standbyTarget entry.
	Latency       *WorkloadLatency
	StandbyHours  *PoolCount
	StandbyTarget *PoolCount
	// CloudCalls is set for a cloudCallsPerMinute entry.
	CloudCalls *OperationCount
}

// Counts lists the counts the condition sets, in the order of the file format.
func (c *Condition) Counts() []NamedCount {
	var counts []NamedCount
	for _, n := range []NamedCount{
		{Name: "podsRunning", Want: c.PodsRunning},
		{Name: "podsPending", Want: c.PodsPending},
		{Name: "readyNodes", Want: c.ReadyNodes},
		{Name: "startedFromStandby", Want: c.StartedFromStandby},
		{Name: "takenWhileWarming", Want: c.TakenWhileWarming},
		{Name: "launchedCold", Want: c.LaunchedCold},
		{Name: "evictions", Want: c.Evictions},
		{Name: "podLatencyP99", Want: c.PodLatencyP99},
		{Name: "podLatencyMax", Want: c.PodLatencyMax},
		{Name: "daemonSetPodsOnStandby", Want: c.DaemonSetPodsOnStandby},
		{Name: "daemonSetPodsDeleted", Want: c.DaemonSetPodsDeleted},
		{Name: "podsDisplaced", Want: c.PodsDisplaced},
		{Name: "podsAwaitingReplacement", Want: c.PodsAwaitingReplacement},
		{Name: "podsKilledByInterruption", Want: c.PodsKilledByInterruption},
		{Name: "interruptionRecoveryP99", Want: c.InterruptionRecoveryP99},
		{Name: "interruptionRecoveryMax", Want: c.InterruptionRecoveryMax},
		{Name: "repairRecoveryMax", Want: c.RepairRecoveryMax},
		{Name: "operatorPeakRSSMiB", Want: c.OperatorPeakRSSMiB},
		{Name: "decisionP99Millis", Want: c.DecisionP99Millis},
		{Name: "apiWritesPerNode", Want: c.APIWritesPerNode},
		{Name: "nodePoolStatusWritesPerSecond", Want: c.NodePoolStatusWritesPerSecond},
	} {
		if n.Want != nil {
			counts = append(counts, n)
		}
	}
	for i := range c.Claims {
		claims := &c.Claims[i]
		name := "claims " + claims.Phase
		if claims.Phase == "" {
			name = "claims"
		}
		if claims.Pool != "" {
			name += " of pool " + claims.Pool
		}
		if claims.Zone != "" {
			name += " in " + claims.Zone
		}
		if claims.CapacityType != "" {
			name += " (" + claims.CapacityType + ")"
		}
		counts = append(counts, NamedCount{Name: name, Want: &claims.Count, Claims: claims})
	}
	for i := range c.PodEvents {
		event := &c.PodEvents[i]
		counts = append(counts, NamedCount{Name: "pods with a " + event.Reason + " Event", Want: &event.Count, Event: event})
	}
	for i := range c.Nodes {
		nodes := &c.Nodes[i]
		name := "nodes"
		if nodes.Pool != "" {
			name += " of pool " + nodes.Pool
		}
		if nodes.CapacityType != "" {
			name += " (" + nodes.CapacityType + ")"
		}
		counts = append(counts, NamedCount{Name: name + " as registered", Want: &nodes.Count, Nodes: nodes})
	}
	for i := range c.PoolConditions {
		pc := &c.PoolConditions[i]
		name := "pools " + pc.Type
		if pc.Reason != "" {
			name += " (" + pc.Reason + ")"
		}
		if pc.Pool != "" {
			name += " named " + pc.Pool
		}
		counts = append(counts, NamedCount{Name: name, Want: &pc.Count, PoolCondition: pc})
	}
	for i := range c.PodsServed {
		served := &c.PodsServed[i]
		counts = append(counts, NamedCount{Name: "pods served " + served.Path, Want: &served.Count, Served: served})
	}
	for i := range c.BufferConditions {
		bc := &c.BufferConditions[i]
		counts = append(counts, NamedCount{Name: bc.describe(), Want: &bc.Count, BufferCondition: bc})
	}
	for i := range c.WorkloadLatency {
		l := &c.WorkloadLatency[i]
		name := fmt.Sprintf("p%d latency of %s", l.Percentile, l.Name)
		if l.Percentile == 100 {
			name = "max latency of " + l.Name
		}
		counts = append(counts, NamedCount{Name: name, Want: &l.Count, Latency: l})
	}
	for i := range c.StandbyNodeHours {
		h := &c.StandbyNodeHours[i]
		counts = append(counts, NamedCount{Name: "standby node-hours of pool " + h.Pool, Want: &h.Count, StandbyHours: h})
	}
	for i := range c.CloudCallsPerMinute {
		calls := &c.CloudCallsPerMinute[i]
		counts = append(counts, NamedCount{Name: calls.Operation + " calls in the busiest minute", Want: &calls.Count, CloudCalls: calls})
	}
	for i := range c.StandbyTarget {
		target := &c.StandbyTarget[i]
		counts = append(counts, NamedCount{Name: "standby target of pool " + target.Pool, Want: &target.Count, StandbyTarget: target})
	}
	return counts
}

// Count bounds a number; every bound set must hold.
type Count struct {
	Equals  *int `json:"equals,omitempty"`
	AtLeast *int `json:"atLeast,omitempty"`
	AtMost  *int `json:"atMost,omitempty"`
}

// ClaimCount counts the NodeClaims in a phase (Launching, Registering, Initializing,
// WarmingUp, Stopping, Standby, Starting, Running, Draining, Terminating), or in any
// phase when it is unset, of one pool or all, in one zone (that of the claim's
// instance) or all, of one capacity type (that of the claim's instance: on-demand or
// spot) or all.
type ClaimCount struct {
	Phase        string `json:"phase,omitempty"`
	Pool         string `json:"pool,omitempty"`
	Zone         string `json:"zone,omitempty"`
	CapacityType string `json:"capacityType,omitempty"`
	Count        `json:",inline"`
}

// Workload is a Deployment of identical pods that request resources.
type Workload struct {
	WorkloadRef `json:",inline"`
	Replicas    int32  `json:"replicas"`
	CPU         string `json:"cpu"`
	Memory      string `json:"memory"`
	// Image defaults to registry.k8s.io/pause:3.10; the simulated kubelets pull it
	// on a node that lacks it, with the image-pull physics.
	Image        string            `json:"image,omitempty"`
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Spread adds a DoNotSchedule topology spread constraint (maxSkew 1) per key:
	// zone or hostname.
	Spread []string `json:"spread,omitempty"`
	// AntiAffinity adds a required pod anti-affinity to the workload's own pods on
	// zone or hostname.
	AntiAffinity string `json:"antiAffinity,omitempty"`
	// Claims are PersistentVolumeClaims (of the workload's namespace) every pod mounts,
	// by name: with the scenario's PersistentVolumes, pods whose volumes tie them to a
	// zone.
	Claims []string `json:"claims,omitempty"`
}

// WorkloadRef names a Deployment; the namespace defaults to "default".
type WorkloadRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Scale sets a Deployment's replicas.
type Scale struct {
	WorkloadRef `json:",inline"`
	Replicas    int32 `json:"replicas"`
}

// Kill picks the moment of a SIGKILL uniformly within a window.
type Kill struct {
	// Within is the window, in scenario time, from the step on.
	Within metav1.Duration `json:"within"`
	// RestartAfter is how long the operator stays dead; default 1s.
	RestartAfter metav1.Duration `json:"restartAfter,omitempty"`
}

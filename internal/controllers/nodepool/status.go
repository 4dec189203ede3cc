package nodepool

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/limits"
	"github.com/stratos-sh/stratos/internal/nodeclass"
	"github.com/stratos-sh/stratos/internal/repair"
	"github.com/stratos-sh/stratos/internal/windows"
)

// observation is what one pass saw and did, for the status.
type observation struct {
	target       int32
	claims       []v1beta1.NodeClaim
	created      int
	limited      string
	classMissing bool
	// classNotReady says why the pool's node class cannot launch nodes, or is "".
	classNotReady string
	// noStandby says why no standby claim could be made, or is "".
	noStandby string
	// noTypeFits says why the template's requirements or kubelet configuration leave no
	// instance type to make a node of, or is "" (see noInstanceTypeFits).
	noTypeFits string
	// standbyJudged is set when the pass looked at whether the node class can stand
	// nodes by; standbyRefused then says why it cannot (see withoutStandby), or is "".
	standbyJudged  bool
	standbyRefused string
	// held counts the standby claims whose offering is marked unavailable.
	held int
	// nextExpiry is when the first claim of the pool expires, zero when none will.
	nextExpiry time.Time
	// targets are the pool's, with the active window's overrides; windowErr says why
	// the windows could not be read.
	targets   windows.Targets
	windowErr error
	// stopped names why the pool makes no change now (paused, kill switch), or is "".
	stopped string
	// budgetErr says which disruption budgets do not do what they say, and
	// budgetBlocking whether one cannot be read (see budgets.Check).
	budgetErr      error
	budgetBlocking bool
	// failures is the pool's record of failed warm-ups; while it counts any, the pool
	// backs off from making standby claims.
	failures *v1beta1.WarmupFailures
	// throttled is set when the bounds on creations per pass or per minute cut the
	// plan; raced when a claim to remove changed since the pass read it.
	throttled, raced bool
	// paced is set when the disruption budgets held back replacements of stale standby
	// claims.
	paced bool
	// types are the instance types the pass listed, nil when it listed none; usage is
	// what the claims count against the limits, with the estimate the pass sized them by.
	types []*cloudprovider.InstanceType
	usage *limits.Usage
}

// Condition reasons of a pool.
const (
	ReasonTargetMet         = "TargetMet"
	ReasonWarmingUp         = "WarmingUp"
	ReasonLimitReached      = "LimitReached"
	ReasonNodeClassNotFound = "NodeClassNotFound"
	// ReasonNodeClassNotReady: the node class has not resolved, and nothing launches.
	ReasonNodeClassNotReady = "NodeClassNotReady"
	ReasonLaunchFailed      = "LaunchFailed"
	// ReasonNoStandbyOffering: no offering the pool allows can stand by (spot only, say).
	ReasonNoStandbyOffering = "NoStandbyOffering"
	ReasonAsExpected        = "AsExpected"
	ReasonInvalidWindow     = "InvalidWindow"
	ReasonPaused            = "Paused"
	ReasonKillSwitch        = "KillSwitch"
	// ReasonInvalidBudget: a budget cannot be read, and no node of the pool is disrupted.
	ReasonInvalidBudget = "InvalidBudget"
	// ReasonBudgetNeverActive: a budget's schedule never fires, and the budget never applies.
	ReasonBudgetNeverActive = "BudgetNeverActive"
	// ReasonNodesUnhealthy: more than half of the pool's running nodes are unhealthy, and
	// node repair holds back: an outage to look into, not nodes to replace.
	ReasonNodesUnhealthy = "NodesUnhealthy"
)

// writeStatus sets the pool's counts, resources and conditions from what was observed,
// and returns the counts by phase.
func writeStatus(pool *v1beta1.NodePool, obs observation) map[v1beta1.NodeClaimPhase]int32 {
	byPhase := map[v1beta1.NodeClaimPhase]int32{v1beta1.PhaseLaunching: int32(obs.created)}
	resources := corev1.ResourceList{}
	var launchFailure, launchFailureReason string
	lost := map[string][]v1beta1.NodeClaim{}
	for _, c := range obs.claims {
		if cond := meta.FindStatusCondition(c.Status.Conditions, v1beta1.ConditionInstanceLost); cond != nil && cond.Status == metav1.ConditionTrue {
			lost[cond.Reason] = append(lost[cond.Reason], c)
		}
		phase := c.Status.Phase
		if phase == "" {
			phase = v1beta1.PhaseLaunching
		}
		byPhase[phase]++
		resources = quota.Add(resources, c.Status.Capacity)
		if cond := meta.FindStatusCondition(c.Status.Conditions, v1beta1.ConditionLaunched); cond != nil && cond.Status == metav1.ConditionFalse {
			launchFailure = fmt.Sprintf("claim %s cannot launch: %s", c.Name, cond.Message)
			launchFailureReason = cond.Reason
		}
	}
	running, unhealthy := repair.Count(obs.claims)
	counts := nodeCounts(byPhase)
	counts.Total = int32(len(obs.claims) + obs.created)
	pool.Status.Nodes = counts
	pool.Status.Resources = resources
	pool.Status.StandbyTarget = obs.target
	pool.Status.ObservedGeneration = pool.Generation
	pool.Status.ActiveWindow = obs.targets.Window
	pool.Status.PreWarming = strings.Join(obs.targets.PreWarming, ",")
	pool.Status.NextWindowTransition = nil
	if !obs.targets.Next.IsZero() {
		pool.Status.NextWindowTransition = &metav1.Time{Time: obs.targets.Next}
	}

	ready := metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonTargetMet,
		Message: fmt.Sprintf("%d standby nodes, as targeted", counts.Standby)}
	degraded := metav1.Condition{Type: v1beta1.ConditionDegraded, Status: metav1.ConditionFalse, Reason: ReasonAsExpected, Message: "nothing keeps the pool from its target"}
	switch {
	case obs.stopped == ReasonKillSwitch:
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonKillSwitch, "spec.killSwitch is on: every node of the pool is drained and terminated, and none is made"
	case obs.stopped == ReasonPaused:
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonPaused, "spec.paused is on: the pool's capacity stays as it is; no claim is created, started, given back or removed, and its launches, stops, drains and timeouts wait"
	case len(lost[v1beta1.ReasonOwnershipLost]) > 0:
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, v1beta1.ReasonOwnershipLost,
			lostMessage(lost[v1beta1.ReasonOwnershipLost], "exist but are not this cluster's: their claims and Nodes stay as they are until the tag is back or the instances are terminated")
	case len(lost[v1beta1.ReasonInstancesVanished]) > 0:
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, v1beta1.ReasonInstancesVanished,
			lostMessage(lost[v1beta1.ReasonInstancesVanished], "are not found by the cloud, too many at once to take its word: their claims and Nodes stay until it has kept saying so")
	case pool.Spec.Repair.RepairEnabled() && repair.Outage(running, unhealthy):
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonNodesUnhealthy, outageMessage(obs.claims, running, unhealthy)
	case obs.windowErr != nil:
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonInvalidWindow, fmt.Sprintf("the spec's targets hold, as %v", obs.windowErr)
	case obs.classMissing:
		ref := pool.Spec.Template.Spec.NodeClassRef
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonNodeClassNotFound, fmt.Sprintf("%s %s does not exist", ref.Kind, ref.Name)
	case obs.classNotReady != "":
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonNodeClassNotReady, "no node launches until the node class is ready: "+obs.classNotReady
	case obs.noTypeFits != "":
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonNoInstanceTypeFits, "no node is made: "+obs.noTypeFits
	case obs.noStandby != "":
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonNoStandbyOffering, fmt.Sprintf("the warm pool cannot be kept: %s", obs.noStandby)
	case backingOff(obs.failures):
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonWarmupFailing, failureMessage(obs.failures)
	case obs.limited != "":
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonLimitReached, fmt.Sprintf("%s keeps the pool below its standby target of %d", obs.limited, obs.target)
	case launchFailure != "" && launchFailureReason == v1beta1.ReasonAccountLimitExceeded:
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, v1beta1.ReasonAccountLimitExceeded, launchFailure
	case launchFailure != "":
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonLaunchFailed, launchFailure
	}
	if counts.Standby < obs.target {
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonWarmingUp
		ready.Message = fmt.Sprintf("%d of %d standby nodes ready", counts.Standby, obs.target)
		if degraded.Status == metav1.ConditionTrue {
			ready.Reason, ready.Message = degraded.Reason, ready.Message+": "+degraded.Message
		}
	}
	ready.ObservedGeneration, degraded.ObservedGeneration = pool.Generation, pool.Generation
	meta.SetStatusCondition(&pool.Status.Conditions, ready)
	meta.SetStatusCondition(&pool.Status.Conditions, degraded)
	meta.SetStatusCondition(&pool.Status.Conditions, budgetsCondition(pool, obs))
	switch {
	case obs.standbyRefused != "":
		meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionWarmPoolSupported, Status: metav1.ConditionFalse,
			Reason: nodeclass.ReasonStandbyUnsupported, Message: obs.standbyRefused, ObservedGeneration: pool.Generation})
	case obs.standbyJudged:
		// Only a pool that cannot keep a warm pool says so; the others carry no condition.
		meta.RemoveStatusCondition(&pool.Status.Conditions, v1beta1.ConditionWarmPoolSupported)
	}
	return byPhase
}

// lostMessage says that the instances of claims are lost, as what says, and what the
// first claim says.
func lostMessage(claims []v1beta1.NodeClaim, what string) string {
	first := slices.MinFunc(claims, func(a, b v1beta1.NodeClaim) int { return strings.Compare(a.Name, b.Name) })
	said := meta.FindStatusCondition(first.Status.Conditions, v1beta1.ConditionInstanceLost)
	return fmt.Sprintf("%d of the pool's instances %s; claim %s: %s", len(claims), what, first.Name, said.Message)
}

// outageMessage says that node repair holds back because unhealthy of the pool's running
// nodes are, and what the first unhealthy claim says.
func outageMessage(claims []v1beta1.NodeClaim, running, unhealthy int) string {
	var first *v1beta1.NodeClaim
	for i := range claims {
		c := &claims[i]
		if c.DeletionTimestamp.IsZero() && repair.Judged(c.Status.Phase) && meta.IsStatusConditionTrue(c.Status.Conditions, v1beta1.ConditionUnhealthy) &&
			(first == nil || c.Name < first.Name) {
			first = c
		}
	}
	message := fmt.Sprintf("%d of the pool's %d running nodes are unhealthy, more than half: node repair holds back and replaces none of them, as so many at once is an outage to look into (new nodes would likely fail alike), not nodes to repair",
		unhealthy, running)
	if first != nil {
		message += fmt.Sprintf("; claim %s: %s", first.Name, meta.FindStatusCondition(first.Status.Conditions, v1beta1.ConditionUnhealthy).Message)
	}
	return message
}

// degradedFor reports whether the pool is Degraded for reason.
func degradedFor(pool *v1beta1.NodePool, reason string) bool {
	c := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason
}

// budgetsCondition says whether every disruption budget does what it says.
func budgetsCondition(pool *v1beta1.NodePool, obs observation) metav1.Condition {
	c := metav1.Condition{Type: v1beta1.ConditionBudgetsValid, Status: metav1.ConditionTrue, Reason: ReasonAsExpected,
		Message: "every disruption budget can be read and its schedule fires", ObservedGeneration: pool.Generation}
	switch {
	case obs.budgetErr == nil:
	case obs.budgetBlocking:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonInvalidBudget, obs.budgetErr.Error()
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonBudgetNeverActive, obs.budgetErr.Error()
	}
	return c
}

// nodeCounts is the status form of counts by phase.
func nodeCounts(byPhase map[v1beta1.NodeClaimPhase]int32) v1beta1.NodeCounts {
	return v1beta1.NodeCounts{
		Launching: byPhase[v1beta1.PhaseLaunching], Registering: byPhase[v1beta1.PhaseRegistering],
		Initializing: byPhase[v1beta1.PhaseInitializing], WarmingUp: byPhase[v1beta1.PhaseWarmingUp],
		Stopping: byPhase[v1beta1.PhaseStopping], Standby: byPhase[v1beta1.PhaseStandby],
		Starting: byPhase[v1beta1.PhaseStarting], Running: byPhase[v1beta1.PhaseRunning],
		Draining: byPhase[v1beta1.PhaseDraining], Terminating: byPhase[v1beta1.PhaseTerminating],
	}
}

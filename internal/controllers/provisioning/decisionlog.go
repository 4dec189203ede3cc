package provisioning

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

// outcome is what a provisioning decision did, the outcome label of
// stratos_provisioning_decisions_total. A decision that did several things counts as
// the one that costs most: launch, then start, then unschedulable, then existing.
type outcome string

const (
	// outcomeLaunch: the decision created claims (it may have started standby ones too).
	outcomeLaunch outcome = "launch"
	// outcomeStart: the decision started standby claims and launched none.
	outcomeStart outcome = "start"
	// outcomeUnschedulable: nothing to start or launch, and pods fit nowhere.
	outcomeUnschedulable outcome = "unschedulable"
	// outcomeExisting: every pod fits on a node or a claim already there.
	outcomeExisting outcome = "existing"
	// outcomeIdle: no pod to decide on (none waits, or those waiting are known not to
	// fit and nothing changed).
	outcomeIdle outcome = "idle"
	// outcomeError: the decision failed: its input could not be read, a write failed, or
	// it panicked. The next batch decides again.
	outcomeError outcome = "error"
)

// outcomeOf is the outcome of a decision whose simulation gave r.
func outcomeOf(r scheduling.Result) outcome {
	switch {
	case len(r.Launches) > 0:
		return outcomeLaunch
	case len(r.Starts) > 0:
		return outcomeStart
	case len(r.Unschedulable) > 0:
		return outcomeUnschedulable
	}
	return outcomeExisting
}

// acts reports whether a decision changes the cluster or leaves pods waiting, so that
// an operator following the INFO log sees it: it starts or launches claims, or pods
// fit nowhere.
func acts(r scheduling.Result) bool {
	return len(r.Starts) > 0 || len(r.Launches) > 0 || len(r.Unschedulable) > 0
}

// logDecision writes the decision line: the pods decided on (how many, and a few of
// their names) and what became of them, with the pools that start or launch nodes for
// them. At INFO when the decision acts, at V(1) when it only found room already there.
func logDecision(log logr.Logger, pods []*corev1.Pod, r scheduling.Result, poolOf map[string]string, took time.Duration) {
	if !acts(r) {
		log = log.V(1)
	}
	var pools []string
	for _, s := range r.Starts {
		pools = append(pools, poolOf[s.Claim])
	}
	for _, l := range r.Launches {
		pools = append(pools, l.Pool)
	}
	slices.Sort(pools)
	log.Info("Found provisionable pod(s)", "pods", len(pods), "podNames", podutil.Names(pods),
		"existing", len(r.Existing), "inFlight", len(r.InFlight), "started", len(r.Starts), "launched", len(r.Launches),
		"unschedulable", len(r.Unschedulable), "nodepools", strings.Join(slices.Compact(pools), ", "), "took", took.Round(time.Millisecond).String())
}

// logStart writes at INFO that a standby claim was asked to run for pods.
func logStart(log logr.Logger, claim *v1beta1.NodeClaim, pods []*corev1.Pod) {
	log.Info("Starting standby node for pod(s)", "nodepool", claim.Spec.NodePool, "nodeclaim", claim.Name, "node", claim.Status.NodeName,
		"instanceType", claim.Status.InstanceType, "zone", claim.Status.Zone, "capacityType", claim.Status.CapacityType,
		"pods", len(pods), "podNames", podutil.Names(pods))
}

// loggedTypes is how many of a launch's instance types its line names.
const loggedTypes = 5

// logLaunch writes at INFO that a claim was created for pods: the types it may launch
// as (cheapest first), the zones and capacity types the pods narrowed it to (empty: any
// the pool has), and the price of its cheapest offering.
func logLaunch(log logr.Logger, claim *v1beta1.NodeClaim, l scheduling.Launch) {
	types := strings.Join(l.InstanceTypes[:min(len(l.InstanceTypes), loggedTypes)], ", ")
	if n := len(l.InstanceTypes) - loggedTypes; n > 0 {
		types += fmt.Sprintf(" and %d other(s)", n)
	}
	log.Info("Launching nodeclaim for pod(s)", "nodepool", l.Pool, "nodeclaim", claim.Name, "instanceTypes", types,
		"zones", strings.Join(l.Zones, ", "), "capacityTypes", strings.Join(l.CapacityTypes, ", "),
		"pricePerHour", l.PricePerHour, "pods", len(l.Pods), "podNames", podutil.Names(l.Pods))
}

// logUnschedulable writes at INFO the pods nothing can take, with why for the first of
// them (the Event on each pod says it for that pod).
func logUnschedulable(log logr.Logger, pods []scheduling.Unschedulable) {
	if len(pods) == 0 {
		return
	}
	list := make([]*corev1.Pod, len(pods))
	for i, u := range pods {
		list[i] = u.Pod
	}
	log.Info("Pod(s) left unschedulable", "pods", len(pods), "podNames", podutil.Names(list),
		"pod", pods[0].Pod.Namespace+"/"+pods[0].Pod.Name, "why", unschedulableReason(pods[0]))
}

// unschedulableReason says, pool by pool, why nothing can take the pod, or why its
// volumes keep it waiting.
func unschedulableReason(u scheduling.Unschedulable) string {
	if u.Volumes != "" {
		return u.Volumes
	}
	names := make([]string, 0, len(u.Reasons))
	for pool := range u.Reasons {
		names = append(names, pool)
	}
	sort.Strings(names)
	var parts []string
	for _, pool := range names {
		if pool == scheduling.NoPools {
			parts = append(parts, u.Reasons[pool])
		} else {
			parts = append(parts, fmt.Sprintf("NodePool %s: %s", pool, u.Reasons[pool]))
		}
	}
	return strings.Join(parts, "; ")
}

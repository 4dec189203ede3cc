package nodeclaim

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// parked reports whether a claim's Node must be kept free of new pods in phase: while it
// comes up, warms up, stops, stands by, starts and drains. A Node launched to run pods
// is parked until it runs too, so that it opens only once the room provisioning found on
// it can be reserved for the pods it found it for (see reserved).
func parked(phase v1beta1.NodeClaimPhase) bool {
	switch phase {
	case v1beta1.PhaseLaunching, v1beta1.PhaseRegistering, v1beta1.PhaseInitializing, v1beta1.PhaseWarmingUp,
		v1beta1.PhaseStopping, v1beta1.PhaseStandby, v1beta1.PhaseStarting, v1beta1.PhaseDraining:
		return true
	default:
		return false
	}
}

// shapeNode sets on node what Stratos owns for a claim entering phase. Labels mirror the
// claim; a parked Node is cordoned and carries the standby taint; a running one is
// neither; a terminating one is cordoned. At registration the claim's annotations, taints
// and startup taints are added too; later the startup taints are left to the agent that
// removes them. It reports whether anything changed.
func shapeNode(node *corev1.Node, claim *v1beta1.NodeClaim, phase v1beta1.NodeClaimPhase, registering bool) bool {
	before := node.DeepCopy()
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	for k, v := range claim.Labels {
		node.Labels[k] = v
	}
	node.Labels[v1beta1.LabelNodeClaim] = claim.Name
	node.Labels[v1beta1.LabelState] = string(phase)

	if registering {
		for k, v := range claim.Annotations {
			if strings.HasPrefix(k, v1beta1.Group+"/") {
				continue // Stratos's own bookkeeping of the claim, not the template's
			}
			if node.Annotations == nil {
				node.Annotations = map[string]string{}
			}
			node.Annotations[k] = v
		}
		for _, t := range append(append([]v1beta1.Taint(nil), claim.Spec.Taints...), claim.Spec.StartupTaints...) {
			addTaint(node, t.Core())
		}
	}

	switch {
	case phase == v1beta1.PhaseTerminating:
		node.Spec.Unschedulable = true
	case parked(phase):
		node.Spec.Unschedulable = true
		addTaint(node, v1beta1.StandbyTaint)
	case phase == v1beta1.PhaseRunning:
		// Only a cordon Stratos made is lifted: the one that goes with the standby taint
		// of a parked node. Any other (an administrator's, say) is not Stratos's to undo.
		if slices.ContainsFunc(node.Spec.Taints, isStandbyTaint) {
			node.Spec.Unschedulable = false
		}
		// A node the cloud is taking away stays cordoned: the interruption controller
		// cordoned it on the notice, and a claim that reaches Running after that (one
		// interrupted while starting) must not take new pods onto it.
		if cloudTakesItAway(claim) {
			node.Spec.Unschedulable = true
		}
		// The cloud controller manager's shutdown taint is lifted too: a claim runs once
		// its Node reports Ready after the start, when that controller lifts it as well,
		// but only at its next pass, up to its monitor period later, and pods wait on it.
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool {
			return isStandbyTaint(t) || t.Key == cloudproviderapi.TaintNodeShutdown
		})
	}
	return !equality.Semantic.DeepEqual(before, node)
}

// ReasonNodeRegisteredAgain: the Event of a claim whose Node was deleted and registered again.
const ReasonNodeRegisteredAgain = "NodeRegisteredAgain"

// registeredAgain reports whether the kubelet registered the claim's Node afresh after
// Stratos had shaped it: the Node was deleted while its instance was stopped, and the
// kubelet created it again at the start, with the labels and taints of its boot
// configuration only, its state label still saying Registering.
func registeredAgain(node *corev1.Node, claim *v1beta1.NodeClaim) bool {
	switch claim.Status.Phase {
	case "", v1beta1.PhaseLaunching, v1beta1.PhaseRegistering:
		return false
	}
	state, ok := node.Labels[v1beta1.LabelState]
	return !ok || state == string(v1beta1.PhaseRegistering)
}

func isStandbyTaint(t corev1.Taint) bool { return t.Key == v1beta1.TaintStandbyKey }

// addTaint adds t unless a taint with its key and effect is there.
func addTaint(node *corev1.Node, t corev1.Taint) {
	for _, existing := range node.Spec.Taints {
		if existing.MatchTaint(&t) {
			return
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, t)
}

// hasTaint reports whether node carries a taint with t's key and effect.
func hasTaint(node *corev1.Node, t corev1.Taint) bool {
	return slices.ContainsFunc(node.Spec.Taints, func(existing corev1.Taint) bool { return existing.MatchTaint(&t) })
}

// cloudTakesItAway reports whether the cloud gave notice that it takes the claim's
// instance away (a spot interruption or a scheduled change; a rebalance recommendation
// takes nothing away).
func cloudTakesItAway(claim *v1beta1.NodeClaim) bool {
	in := claim.Status.Interruption
	return in != nil && in.Kind != v1beta1.InterruptionRebalance
}

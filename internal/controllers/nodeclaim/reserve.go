package nodeclaim

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/state"
)

// Nominations tells which waiting pods provisioning placed on a claim, and whether it
// reserved the claim's Node to them.
type Nominations interface {
	NominatedTo(claim string) []*corev1.Pod
	// Reserved is false for the claims of a decision whose pods are all alike and whose
	// claims are all alike: any pod fits any of them as well as its own, so that the
	// reservation would change nothing and cost its writes.
	Reserved(claim string) bool
}

// reservedTaint keeps every pod but those provisioning placed on the claim off its Node
// for the first moments it takes pods.
func reservedTaint(claim string) corev1.Taint {
	return corev1.Taint{Key: v1beta1.TaintReservedKey, Value: claim, Effect: corev1.TaintEffectNoSchedule}
}

func isReservedTaint(t corev1.Taint) bool { return t.Key == v1beta1.TaintReservedKey }

// reserved reports whether waiting pods provisioning placed on the claim are to get its
// Node first: provisioning gave each a toleration of the claim's reservation taint
// (provisioning's reserve) when it nominated it, and the Node opens with that taint (see
// transition), so that kube-scheduler, which knows nothing of the nominations, cannot
// give that room to pods that could go anywhere. Without it the first Nodes to turn
// Ready take whatever pods wait, and pods that only fit their own claim (arm64-only,
// 14 CPU, anti-affine) are left over for a second wave. The taint is lifted once those
// pods are bound, or BindGrace after the claim runs (liftReservation). Provisioning
// reserves only where it can change the outcome (Nominations.Reserved).
func (r *Lifecycle) reserved(claimName string) bool {
	return r.Nominations != nil && r.Nominations.Reserved(claimName) && len(r.Nominations.NominatedTo(claimName)) > 0
}

// reservationPoll is how often a running claim looks whether its reservation can go.
const reservationPoll = 250 * time.Millisecond

// liftReservation opens a running claim's Node to every pod once the pods reserved room
// on it are bound (none waits nominated to the claim), or BindGrace after it started
// running. It returns when to look again while the reservation may hold (zero: lifted,
// or there was none).
func (r *Lifecycle) liftReservation(ctx context.Context, claim *v1beta1.NodeClaim, node *corev1.Node) (time.Duration, error) {
	var left time.Duration
	if claim.Status.LastPhaseChangeTime != nil {
		left = state.BindGrace - r.since(claim.Status.LastPhaseChangeTime.Time)
	}
	if !slices.ContainsFunc(node.Spec.Taints, isReservedTaint) {
		if left > -time.Second {
			// The cache may not show the taint just written: look again until the
			// reservation has surely ended.
			return reservationPoll, nil
		}
		return 0, nil
	}
	if left > 0 && r.reserved(claim.Name) {
		return min(left, reservationPoll), nil
	}
	err := r.patchNode(ctx, node, func(n *corev1.Node) bool {
		before := len(n.Spec.Taints)
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, isReservedTaint)
		return len(n.Spec.Taints) != before
	})
	if err == nil {
		log.FromContext(ctx).V(1).Info("Lifted the reservation of the claim's Node", "node", node.Name)
	}
	return 0, err
}

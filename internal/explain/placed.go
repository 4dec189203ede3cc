package explain

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// PlacedOn finds, among claims, the one provisioning last placed a waiting pod on by
// the claims' stratos.sh/placed-pods lists: a decision that reserves nothing writes no
// toleration to the pod, and the list, written with the claim's creation or start, is
// then what names the claim. Nil when no claim lists it.
//
// A list is read only while it can still be about this pod: the claim is asked to run
// and not being deleted, and, when it runs already, the pod was created before it turned
// Running (v1beta1.ListsPlacedPod). Of several claims (a pod placed again after its
// nomination lapsed), the one most recently created or changed phase is the latest
// placement.
func PlacedOn(pod *corev1.Pod, claims []v1beta1.NodeClaim) *v1beta1.NodeClaim {
	var found *v1beta1.NodeClaim
	for i := range claims {
		claim := &claims[i]
		if !askedToRun(claim) || !v1beta1.ListsPlacedPod(claim, pod) {
			continue
		}
		if found == nil || placedAt(claim).After(placedAt(found)) {
			found = claim
		}
	}
	return found
}

// askedToRun: the claim is to serve pods, as the explanation of a pending pod requires.
func askedToRun(claim *v1beta1.NodeClaim) bool {
	return claim.DeletionTimestamp.IsZero() && claim.Spec.DesiredState == v1beta1.DesiredRunning
}

// placedAt is the latest of the claim's creation and its last change of phase: a start
// from standby changes the phase at once.
func placedAt(claim *v1beta1.NodeClaim) time.Time {
	at := claim.CreationTimestamp.Time
	if t := claim.Status.LastPhaseChangeTime; t != nil && t.After(at) {
		at = t.Time
	}
	return at
}

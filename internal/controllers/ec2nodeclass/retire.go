package ec2nodeclass

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// ReasonInstanceProfileRetired is the Event of a class whose old instance profile (of
// a role it no longer names) was removed once no claim held it.
const ReasonInstanceProfileRetired = "InstanceProfileRetired"

// retire removes the instance profiles Stratos made for class's earlier roles (all of
// them, once the class names its own profile instead) once no claim's instance holds
// them: an instance keeps its profile for life, and a stopped
// standby instance needs it again at its next start. A claim that does not record its
// profile (launched before Stratos recorded it, or not launched yet: its launch may
// have read the class before its profile changed) may hold any of them, and keeps them
// all. Failing here changes nothing that works: the next pass tries again.
func (r *AWSReconciler) retire(ctx context.Context, class *v1beta1.EC2NodeClass) {
	claims := &v1beta1.NodeClaimList{}
	if err := r.Client.List(ctx, claims); err != nil {
		log.FromContext(ctx).Error(err, "Listing the NodeClaims that may hold old instance profiles", "ec2nodeclass", class.Name)
		return
	}
	held := map[string]bool{class.Status.InstanceProfile: true}
	for i := range claims.Items {
		claim := &claims.Items[i]
		if ref := claim.Spec.NodeClassRef; ref.Kind != "EC2NodeClass" || ref.Name != class.Name {
			continue
		}
		if claim.Status.InstanceProfile == "" {
			return
		}
		held[claim.Status.InstanceProfile] = true
	}
	removed, err := r.Resolver.RetireInstanceProfiles(ctx, class.Name, func(name string) bool { return held[name] })
	for _, name := range removed {
		r.Recorder.Eventf(class, nil, corev1.EventTypeNormal, ReasonInstanceProfileRetired, "Retire",
			"Removed instance profile %s of an earlier role: no node holds it any more", name)
	}
	if err != nil {
		log.FromContext(ctx).Error(err, "Removing the instance profiles of earlier roles", "ec2nodeclass", class.Name)
	}
}

// mayHoldRetiredProfile reports whether claim, of class, may have been what kept one of
// the class's old instance profiles: its profile is not the class's current one, or it
// does not record one.
func mayHoldRetiredProfile(claim *v1beta1.NodeClaim, class *v1beta1.EC2NodeClass) bool {
	return controllerutil.ContainsFinalizer(class, Finalizer) && claim.Status.InstanceProfile != class.Status.InstanceProfile
}

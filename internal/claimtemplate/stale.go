package claimtemplate

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// ReasonTemplateCurrent is the reason of the Drifted condition of a claim that has not
// drifted.
const ReasonTemplateCurrent = "TemplateCurrent"

// NotDrifted is the Drifted condition, False, of a claim launched from its pool's current
// template and node class. A claim is current at its launch, so the lifecycle controller
// sets it in the status write that records the launch, and the pool's drift pass, which
// finds it there, writes nothing for the claim until it drifts.
func NotDrifted() metav1.Condition {
	return metav1.Condition{Type: v1beta1.ConditionDrifted, Status: metav1.ConditionFalse, Reason: ReasonTemplateCurrent,
		Message: "The node was launched from the pool's current template and node class"}
}

// Drifted reports whether claim was launched from another template than the one whose
// Hash is current. A claim not launched yet has not drifted: it launches from the
// current template.
func Drifted(claim *v1beta1.NodeClaim, current string) bool {
	return claim.Status.TemplateHash != "" && current != "" && claim.Status.TemplateHash != current
}

// ImageDrifted reports whether a claim's instance runs an image that is not among the
// images its node class resolves to now, such as the one behind al2023@latest before a
// new one was published. The spec did not change, so the hashes cannot tell. A claim
// whose image is not known, or a class that resolves no image now, is not drifted by
// its image: a selector that stops matching must not replace every node.
func ImageDrifted(claim *v1beta1.NodeClaim, images []string) bool {
	return claim.Status.ImageID != "" && len(images) > 0 && !slices.Contains(images, claim.Status.ImageID)
}

// ProfileDrifted reports whether a claim's instance was launched with another instance
// profile than its node class's nodes launch with now: a changed spec.role gets a
// profile of its own, and the nodes holding the old one are replaced like any drifted
// node, within the pool's budgets, rather than have their role changed under them. A
// claim that does not record its profile (launched before Stratos recorded it, or on a
// cloud without profiles), or a class without a profile now (a role that does not
// resolve), is not drifted by it: a broken setting must not replace every node.
func ProfileDrifted(claim *v1beta1.NodeClaim, profile string) bool {
	return claim.Status.InstanceProfile != "" && profile != "" && claim.Status.InstanceProfile != profile
}

// ShapeDrifted reports whether a claim standing by was made for another shape than the
// pool's spec.standby asks for now. A claim asked to run is not: the standby shape is the
// warm pool's, and a running node serves whatever pods it got.
func ShapeDrifted(pool *v1beta1.NodePool, claim *v1beta1.NodeClaim) bool {
	made := claim.Annotations[v1beta1.AnnotationStandbyShapeHash]
	return claim.Spec.DesiredState == v1beta1.DesiredStandby && made != "" && made != StandbyShapeHash(pool)
}

// ExpiresAt is when claim expires under its pool's expireAfter, counted from the claim's
// creation, which its launch follows at once; zero when the pool's nodes never expire.
func ExpiresAt(pool *v1beta1.NodePool, claim *v1beta1.NodeClaim) time.Time {
	expiry := pool.Spec.Template.Spec.ExpireAfter
	if expiry == nil || expiry.Duration == nil {
		return time.Time{}
	}
	return claim.CreationTimestamp.Add(*expiry.Duration)
}

// Stale says why a claim should be replaced at now, given what its pool's nodes should
// be made of, Drifted before Expired, or "" when it should not.
func Stale(pool *v1beta1.NodePool, claim *v1beta1.NodeClaim, current Current, now time.Time) v1beta1.DisruptionReason {
	if Drifted(claim, current.Hash) || ImageDrifted(claim, current.Images) || ProfileDrifted(claim, current.InstanceProfile) || ShapeDrifted(pool, claim) {
		return v1beta1.DisruptionDrifted
	}
	if at := ExpiresAt(pool, claim); !at.IsZero() && !now.Before(at) {
		return v1beta1.DisruptionExpired
	}
	return ""
}

package nodeclaim

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// errNotVisibleYet says that the cloud answered NotFound for an instance launched within
// the visibility grace: a step that meets it waits for the next poll instead of taking
// the instance for gone.
var errNotVisibleYet = errors.New("the cloud does not show the freshly launched instance yet")

// notVisibleYet reports whether a NotFound for the claim's instance may only mean that
// the cloud does not show it yet: it was launched less than grace ago. Clouds are
// eventually consistent, EC2 documents it: an instance RunInstances has just made may be
// unknown to DescribeInstances for a while.
func notVisibleYet(claim *v1alpha1.NodeClaim, now time.Time, grace time.Duration) bool {
	return now.Sub(launchedAt(claim)) < grace
}

// launchedAt is when the claim's instance was launched: the Launched condition's time,
// or the claim's creation when it has none.
func launchedAt(claim *v1alpha1.NodeClaim) time.Time {
	if c := meta.FindStatusCondition(claim.Status.Conditions, v1alpha1.ConditionLaunched); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return claim.CreationTimestamp.Time
}

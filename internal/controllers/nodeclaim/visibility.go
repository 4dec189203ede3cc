package nodeclaim

import (
	"errors"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// errNotVisibleYet says that the cloud answered NotFound for an instance launched within
// the visibility grace: a step that meets it waits for the next poll instead of taking
// the instance for gone.
var errNotVisibleYet = errors.New("the cloud does not show the freshly launched instance yet")

// notVisibleYet reports whether a NotFound for the claim's instance may only mean that
// the cloud does not show it yet: it was launched less than grace ago. Clouds are
// eventually consistent, EC2 documents it: an instance RunInstances has just made may be
// unknown to DescribeInstances for a while.
func notVisibleYet(claim *v1beta1.NodeClaim, now time.Time, grace time.Duration) bool {
	return now.Sub(launchedAt(claim)) < grace
}

// launchedAt is when the claim's instance was launched: the Launched condition's time,
// or the claim's creation when it has none.
func launchedAt(claim *v1beta1.NodeClaim) time.Time {
	return trueSince(claim, v1beta1.ConditionLaunched, claim.CreationTimestamp.Time)
}

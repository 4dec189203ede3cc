package nodeclaim

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/nodeclass"
)

// ReasonEndedAtLaunch: the cloud accepted the launch and then ended the instance for a
// fault of the launch's settings (on EC2, an encrypted volume whose KMS key cannot be
// used), which a relaunch with the same settings meets again.
const ReasonEndedAtLaunch = "EndedAtLaunch"

// endedAtLaunchError says that the claim keeps the failure of its launch on show until
// its launch timeout, rather than be removed at once and launched again by its pool.
type endedAtLaunchError struct{ wait time.Duration }

func (e *endedAtLaunchError) Error() string {
	return "the cloud ended the claim's instance at launch; the claim waits for its launch timeout"
}

// endedAtLaunch handles a claim whose instance the cloud ended right after accepting
// its launch. Removed at once, as an instance terminated outside Stratos is, its pool
// would make another claim and launch again at once, into the same failure, for ever.
// Instead the claim says why (its Launched condition, False, with the cloud's reason
// and the KMS keys its node class names, and a Warning Event once) and stays, holding
// its place in the pool, until its launch timeout counted from its creation; then it is
// removed with that reason.
func (r *Lifecycle) endedAtLaunch(ctx context.Context, claim *v1beta1.NodeClaim, instance *cloudprovider.Instance) error {
	message := instance.EndedAtLaunch
	if class, err := nodeclass.Get(ctx, r.Client, claim.Spec.NodeClassRef); err == nil {
		if keys := nodeclass.EncryptionKeys(class); len(keys) > 0 {
			message += fmt.Sprintf("; %s %s encrypts volumes with KMS key %s", claim.Spec.NodeClassRef.Kind, claim.Spec.NodeClassRef.Name, strings.Join(keys, ", "))
		}
	}
	left := r.Options.LaunchTimeout - r.since(claim.CreationTimestamp.Time)
	if left <= 0 {
		return r.removeForTimeout(ctx, claim, ReasonEndedAtLaunch, message)
	}
	if previous := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionLaunched); previous == nil || previous.Reason != ReasonEndedAtLaunch {
		r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, ReasonEndedAtLaunch, "Launch", "%s", message)
	}
	r.setCondition(claim, v1beta1.ConditionLaunched, metav1.ConditionFalse, ReasonEndedAtLaunch, message)
	return &endedAtLaunchError{wait: left}
}

package interruption_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// A notice whose handling fails on an API error stays in the queue, counted as an
// error, and is handled when it comes again.
func TestANoticeWhoseHandlingFailedComesAgain(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	f := newFixture(t, func(o *stack.OperatorOptions) {
		o.Intercept = func(c client.WithWatch) client.WithWatch {
			return interceptor.NewClient(c, interceptor.Funcs{
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					if claim, ok := obj.(*v1beta1.NodeClaim); ok && failing.Load() && claim.Status.Interruption != nil {
						return errors.New("the API server is unavailable")
					}
					return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
				},
			})
		}
	})
	claim := f.runningClaim("retried", v1beta1.CapacityTypeSpot, nil)
	handleErrors := counter(t, "message_errors_total", map[string]string{"reason": "handle"})

	id := f.queue.post(spotWarning("spot-retried", claim.Status.InstanceID, now()))[0]
	f.Eventually("the failed handling is counted", func() bool {
		return counter(t, "message_errors_total", map[string]string{"reason": "handle"}) > handleErrors
	})
	if f.queue.isDeleted(id) || !f.queue.isInFlight(id) {
		t.Fatalf("the message whose handling failed was deleted (%v) or is not in flight (%v)", f.queue.isDeleted(id), f.queue.isInFlight(id))
	}
	if f.Claim(claim.Name).Status.Interruption != nil {
		t.Fatal("the claim was marked though the write failed")
	}

	versions := f.ClaimVersions(claim.Name)
	failing.Store(false)
	f.queue.redeliver()
	f.waitDeleted(id)
	if got := f.interrupted(versions).Status.Interruption; got.Kind != v1beta1.InterruptionSpot {
		t.Fatalf("status.interruption %+v after the message came again, want SpotInterruption", got)
	}
}

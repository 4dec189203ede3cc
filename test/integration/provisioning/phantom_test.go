package provisioning_test

import (
	"context"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// A claim provisioning wrote that the informer never shows — created and deleted while
// the watch was down — stops counting after state.WriteConfirmTimeout, and its pods get
// capacity again. Here the API server never receives the first claim provisioning
// writes, which the informer sees the same way. On main before the fix, the phantom
// held the pods for the 15-minute nomination TTL.
func TestAPhantomClaimStopsHoldingPods(t *testing.T) {
	f := stack.NewFixture(t, nil)
	var phantoms atomic.Int32
	f.Op.Stop()
	f.Opts.Intercept = func(c client.WithWatch) client.WithWatch {
		return interceptor.NewClient(c, interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if claim, ok := obj.(*v1beta1.NodeClaim); ok && claim.Spec.DesiredState == v1beta1.DesiredRunning && phantoms.Add(1) == 1 {
					claim.Name, claim.UID, claim.ResourceVersion = claim.GenerateName+"phantom", types.UID("phantom"), "1"
					return nil // as if created, then deleted before the watch saw it
				}
				return c.Create(ctx, obj, opts...)
			},
		})
	}
	f.Op = stack.StartOperator(t, f.Env, f.Cloud, f.Opts)
	f.Pool("web", 0, nil)

	pendingPods(f, "default", "web", 2, "1", "1Gi", nil)
	f.Eventually("provisioning writes the phantom claim", func() bool { return phantoms.Load() >= 1 })
	f.Eventually("after the phantom's bound, a real claim is launched for the pods", func() bool {
		return len(claimsAskedToRun(f, "web")) == 1
	})
	if phantoms.Load() != 2 {
		t.Fatalf("%d claims were written, want the phantom and one real claim", phantoms.Load())
	}
}

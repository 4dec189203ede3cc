package disruption_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/test/stack"
)

// The DisruptionBlocked condition an abandoned drain writes survives a conflict: the
// lifecycle controller writes the claim as the drain is abandoned, and no later pass
// comes back to a node whose pod has nowhere else to go. Here another writer changes the
// claim just before the first write of the condition, which the API server then refuses
// for its stale version.
func TestABudgetKeepsTheNodeThoughItsFirstWriteConflicts(t *testing.T) {
	f := stack.NewFixture(t, nil)
	var conflicted atomic.Bool
	opts := f.Opts
	opts.Disruption.AbandonDrainAfter = 2 * time.Second
	opts.Intercept = func(c client.WithWatch) client.WithWatch {
		return interceptor.NewClient(c, interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				if claim, ok := obj.(*v1beta1.NodeClaim); ok && meta.IsStatusConditionTrue(claim.Status.Conditions, v1beta1.ConditionDisruptionBlocked) &&
					conflicted.CompareAndSwap(false, true) {
					stack.Patch(f, claim.DeepCopy(), func(c *v1beta1.NodeClaim) {
						if c.Annotations == nil {
							c.Annotations = map[string]string{}
						}
						c.Annotations["example.com/touched"] = "by another writer"
					})
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		})
	}
	f.RestartOperator(opts)
	f.Pool("web", 1, quickly(4))
	standby := f.WaitForPhase("web", 1, v1beta1.PhaseStandby)
	pod := loaded(f, "guarded", standby[0].Status.NodeName, 0.2, nil)
	guard(f, "guarded", 1, 0)
	guarded := start(f, standby)[0]
	ready(f, pod)

	f.SetDesired(guarded.Name, v1beta1.DesiredStandby)
	f.Eventually("the drain is blocked", func() bool { return f.EventSeen(guarded.Name, nodeclaim.ReasonDrainBlocked) })
	heldBackBy(f, guarded.Name, "default/guarded")
	if !conflicted.Load() {
		t.Fatal("no write of the condition met the other writer's change")
	}
}

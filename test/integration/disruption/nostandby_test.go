package disruption_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// An empty node of a pool whose ClusterAPINodeClass cannot stand by is terminated, not
// given back to a warm pool the pool cannot keep, though its standby.max leaves room.
func TestAnEmptyNodeOfAClassThatCannotStandByIsTerminated(t *testing.T) {
	t.Parallel()
	f := stack.NewSerialFixtureWith(t, fakecloud.Options{}, func(o *stack.OperatorOptions) { o.WrapCloud = stack.CAPIOnFake })
	class := f.CAPIClass("metal", v1beta1.ClusterAPIStandbyUnsupported)
	pool := f.Pool("metal-empty", 0, func(p *v1beta1.NodePool) {
		quickly(3)(p)
		p.Spec.Template.Spec.NodeClassRef = v1beta1.NodeClassReference{Kind: "ClusterAPINodeClass", Name: class.Name}
	})
	claim := claimtemplate.NewClaim(pool, v1beta1.DesiredRunning)
	f.Create(claim)
	running := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
	f.Eventually("the empty node is terminated", func() bool {
		got := &v1beta1.NodeClaim{}
		err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(claim), got)
		if err == nil && got.Spec.DesiredState == v1beta1.DesiredStandby {
			t.Fatalf("claim %s was asked to stand by", claim.Name)
		}
		return apierrors.IsNotFound(err)
	})
	wantDecisions(t, "metal-empty", disruption.ReasonEmpty, map[string]float64{"standby": 0, "terminate": 1})
	f.Eventually("the claim's instance is terminated", func() bool {
		inst, ok := f.Instance(running.Status.InstanceID)
		return !ok || inst.State == cloudprovider.StateTerminated
	})
}

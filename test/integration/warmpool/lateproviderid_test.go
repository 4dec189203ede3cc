package warmpool_test

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// lateProviderIDs is a cloud that does not know its instances' provider IDs until
// revealed, as Cluster API knows a Machine's only once the infrastructure provider has
// provisioned it: the launch and every description answer with none until then.
type lateProviderIDs struct {
	cloudprovider.API
	revealed  atomic.Bool
	describes atomic.Int64
}

func (c *lateProviderIDs) hide(i *cloudprovider.Instance) *cloudprovider.Instance {
	if i == nil || c.revealed.Load() {
		return i
	}
	hidden := *i
	hidden.ProviderID = ""
	return &hidden
}

func (c *lateProviderIDs) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	i, err := c.API.Create(ctx, req)
	return c.hide(i), err
}

func (c *lateProviderIDs) DescribeInstances(ctx context.Context, ids []string) (map[string]*cloudprovider.Instance, error) {
	found, err := c.API.DescribeInstances(ctx, ids)
	for id, i := range found {
		found[id] = c.hide(i)
	}
	c.describes.Add(1)
	return found, err
}

func (c *lateProviderIDs) ListInstances(ctx context.Context, tags map[string]string) ([]*cloudprovider.Instance, error) {
	list, err := c.API.ListInstances(ctx, tags)
	for n, i := range list {
		list[n] = c.hide(i)
	}
	return list, err
}

// A launch the cloud reports without a provider ID, which it learns later: the claim
// waits in Registering (its Node, there already, cannot be told to be its own), asking
// the cloud at each poll, and once the cloud knows the ID records it, adopts the Node and
// goes on.
func TestProviderIDKnownOnlyAfterTheLaunch(t *testing.T) {
	t.Parallel()
	late := &lateProviderIDs{}
	f := stack.NewSerialFixtureWith(t, fakecloud.Options{}, func(o *stack.OperatorOptions) {
		o.WrapCloud = func(api cloudprovider.API) cloudprovider.API { late.API = api; return late }
	})
	f.Pool("late", 1, nil)
	var claim v1beta1.NodeClaim
	var node corev1.Node
	f.Eventually("the claim launched and the kubelet registered its Node", func() bool {
		claims := f.Claims("late")
		if len(claims) != 1 || claims[0].Status.InstanceID == "" {
			return false
		}
		claim = claims[0]
		instance, ok := f.Instance(claim.Status.InstanceID)
		nodes := &corev1.NodeList{}
		if !ok || f.Env.Client.List(f.Ctx, nodes) != nil {
			return false
		}
		for _, n := range nodes.Items {
			if n.Spec.ProviderID == instance.ProviderID {
				node = n
				return true
			}
		}
		return false
	})
	asked := late.describes.Load()
	f.Eventually("the claim asked the cloud about its instance again", func() bool { return late.describes.Load() >= asked+3 })
	waiting := f.Claim(claim.Name)
	if waiting.Status.Phase != v1beta1.PhaseRegistering || waiting.Status.ProviderID != "" || waiting.Status.NodeName != "" {
		t.Fatalf("before the cloud knows the provider ID the claim is %s with provider ID %q and Node %q; want Registering with neither",
			waiting.Status.Phase, waiting.Status.ProviderID, waiting.Status.NodeName)
	}

	late.revealed.Store(true)
	standby := f.WaitForClaim(claim.Name, v1beta1.PhaseStandby)
	if standby.Status.ProviderID != node.Spec.ProviderID || standby.Status.NodeName != node.Name {
		t.Fatalf("the claim records provider ID %q and Node %q; want %q and %s", standby.Status.ProviderID, standby.Status.NodeName, node.Spec.ProviderID, node.Name)
	}
	// The Node finds its claim by the provider ID the claim recorded.
	byID := &v1beta1.NodeClaimList{}
	if err := f.Op.Manager.GetClient().List(f.Ctx, byID, client.MatchingFields{indexes.ClaimProviderID: node.Spec.ProviderID}); err != nil || len(byID.Items) != 1 || byID.Items[0].Name != claim.Name {
		t.Fatalf("the claims indexed by provider ID %s: %v (err %v); want %s", node.Spec.ProviderID, byID.Items, err, claim.Name)
	}
	f.CheckInvariants()
}

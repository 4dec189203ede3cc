package kubelet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

// newCloud returns a cloud on a fake clock; physics default to simtest.NoJitter().
func newCloud(t *testing.T, opts fakecloud.Options) (*fakecloud.Cloud, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(simtest.Epoch)
	opts.Clock = clk
	if opts.Physics == (physics.Physics{}) {
		opts.Physics = simtest.NoJitter()
	}
	return fakecloud.New(opts), clk
}

func request(token string) *cloudprovider.CreateRequest {
	return &cloudprovider.CreateRequest{ClientToken: token, Tags: map[string]string{v1beta1.TagCluster: "test"}}
}

func create(t *testing.T, c *fakecloud.Cloud, req *cloudprovider.CreateRequest) *cloudprovider.Instance {
	t.Helper()
	inst, err := c.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return inst
}

// stateOf describes one instance; "" when the cloud does not know it.
func stateOf(t *testing.T, c *fakecloud.Cloud, id string) cloudprovider.InstanceState {
	t.Helper()
	found, err := c.DescribeInstances(context.Background(), []string{id})
	if err != nil {
		t.Fatalf("DescribeInstances: %v", err)
	}
	if inst, ok := found[id]; ok {
		return inst.State
	}
	return ""
}

func wantState(t *testing.T, c *fakecloud.Cloud, id string, want cloudprovider.InstanceState) {
	t.Helper()
	if got := stateOf(t, c, id); got != want {
		t.Fatalf("state of %s = %q, want %q", id, got, want)
	}
}

// act calls a batch operation on one instance and returns its per-instance error.
func act(t *testing.T, call func(context.Context, []string) (map[string]error, error), id string) error {
	t.Helper()
	errs, err := call(context.Background(), []string{id})
	if err != nil {
		t.Fatalf("whole call failed: %v", err)
	}
	return errs[id]
}

// view returns what the kubelet of an instance reports now.
func view(t *testing.T, c *fakecloud.Cloud, id string) physics.NodeView {
	t.Helper()
	_, views := c.NodeViews()
	for _, v := range views {
		if v.InstanceID == id {
			return v
		}
	}
	t.Fatalf("no node view for %s", id)
	return physics.NodeView{}
}

// plainStop is c's StopInstances without hibernation, as a batch operation.
func plainStop(c *fakecloud.Cloud) func(context.Context, []string) (map[string]error, error) {
	return func(ctx context.Context, ids []string) (map[string]error, error) {
		return c.StopInstances(ctx, ids, false)
	}
}

// tick is the smallest step of the fake clock.
const tick = time.Nanosecond

// fakeEBSAttachLimit is the EBS attach limit of every fake instance type.
const fakeEBSAttachLimit = 26

func hibernating(token string) *cloudprovider.CreateRequest {
	req := request(token)
	req.NodeClass = &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{Hibernate: true}}
	return req
}

func onDemand(token string) *cloudprovider.CreateRequest {
	req := request(token)
	req.Requirements = []corev1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}}}
	return req
}

// imagePullBackOff is the first back-off after a failed image pull (physics.ImageStore).
const imagePullBackOff = 10 * time.Second

var _ Machines = (*fakecloud.Cloud)(nil)

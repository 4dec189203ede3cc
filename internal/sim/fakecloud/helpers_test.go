package fakecloud

import (
	"context"
	"errors"
	"slices"
	"testing"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

// newCloud returns a cloud on a fake clock; physics default to simtest.NoJitter().
func newCloud(t *testing.T, opts Options) (*Cloud, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(simtest.Epoch)
	opts.Clock = clk
	if opts.Physics == (physics.Physics{}) {
		opts.Physics = simtest.NoJitter()
	}
	return New(opts), clk
}

func request(token string) *cloudprovider.CreateRequest {
	return &cloudprovider.CreateRequest{ClientToken: token, Tags: map[string]string{v1beta1.TagCluster: "test"}}
}

func create(t *testing.T, c *Cloud, req *cloudprovider.CreateRequest) *cloudprovider.Instance {
	t.Helper()
	inst, err := c.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return inst
}

// stateOf describes one instance; "" when the cloud does not know it.
func stateOf(t *testing.T, c *Cloud, id string) cloudprovider.InstanceState {
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

func wantState(t *testing.T, c *Cloud, id string, want cloudprovider.InstanceState) {
	t.Helper()
	if got := stateOf(t, c, id); got != want {
		t.Fatalf("state of %s = %q, want %q", id, got, want)
	}
}

// wantCode checks that err is a cloud error with the given code.
func wantCode(t *testing.T, err error, want cloudprovider.ErrorCode) {
	t.Helper()
	var cloudErr *cloudprovider.Error
	if !errors.As(err, &cloudErr) || cloudErr.Code != want {
		t.Fatalf("error = %v, want code %s", err, want)
	}
}

// wantOfferings checks the offerings a cloud error says are out of capacity.
func wantOfferings(t *testing.T, err error, want []cloudprovider.OfferingKey) {
	t.Helper()
	var cloudErr *cloudprovider.Error
	if !errors.As(err, &cloudErr) || !slices.Equal(cloudErr.Offerings, want) {
		t.Fatalf("error %v names offerings %v, want %v", err, offeringsOf(err), want)
	}
}

func offeringsOf(err error) []cloudprovider.OfferingKey {
	var cloudErr *cloudprovider.Error
	if errors.As(err, &cloudErr) {
		return cloudErr.Offerings
	}
	return nil
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
func view(t *testing.T, c *Cloud, id string) physics.NodeView {
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

// running launches an instance and steps the clock until it runs.
func running(t *testing.T, c *Cloud, clk *testingclock.FakeClock, req *cloudprovider.CreateRequest) *cloudprovider.Instance {
	t.Helper()
	inst := create(t, c, req)
	clk.Step(c.physics.LaunchDelay)
	wantState(t, c, inst.ID, cloudprovider.StateRunning)
	return inst
}

// stopped launches an instance and stops it.
func stopped(t *testing.T, c *Cloud, clk *testingclock.FakeClock, req *cloudprovider.CreateRequest) *cloudprovider.Instance {
	t.Helper()
	inst := running(t, c, clk, req)
	if err := act(t, plainStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.StopDelay)
	wantState(t, c, inst.ID, cloudprovider.StateStopped)
	return inst
}

// plainStop is c's StopInstances without hibernation, as a batch operation.
func plainStop(c *Cloud) func(context.Context, []string) (map[string]error, error) {
	return func(ctx context.Context, ids []string) (map[string]error, error) {
		return c.StopInstances(ctx, ids, false)
	}
}

// hibernateStop is c's StopInstances with hibernation, as a batch operation.
func hibernateStop(c *Cloud) func(context.Context, []string) (map[string]error, error) {
	return func(ctx context.Context, ids []string) (map[string]error, error) {
		return c.StopInstances(ctx, ids, true)
	}
}

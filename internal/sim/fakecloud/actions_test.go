package fakecloud

import (
	"context"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

func TestTransitions(t *testing.T) {
	type setup func(t *testing.T, c *Cloud, clk *testingclock.FakeClock) string
	p := simtest.NoJitter()
	// at returns a setup that launches an instance, lets it run, optionally acts on it,
	// and waits.
	at := func(prepare func(c *Cloud, id string), wait time.Duration) setup {
		return func(t *testing.T, c *Cloud, clk *testingclock.FakeClock) string {
			inst := running(t, c, clk, request("a"))
			if prepare != nil {
				prepare(c, inst.ID)
			}
			clk.Step(wait)
			return inst.ID
		}
	}
	stop := func(c *Cloud, id string) { _, _ = c.StopInstances(context.Background(), []string{id}, false) }
	terminate := func(c *Cloud, id string) { _, _ = c.TerminateInstances(context.Background(), []string{id}) }
	pending := func(t *testing.T, c *Cloud, _ *testingclock.FakeClock) string { return create(t, c, request("a")).ID }
	states := map[cloudprovider.InstanceState]setup{
		cloudprovider.StatePending:      pending,
		cloudprovider.StateRunning:      at(nil, 0),
		cloudprovider.StateStopping:     at(stop, 0),
		cloudprovider.StateStopped:      at(stop, p.StopDelay),
		cloudprovider.StateShuttingDown: at(terminate, 0),
		cloudprovider.StateTerminated:   at(terminate, p.TerminateDelay),
	}
	// want maps a state to the state each call leaves, or "" for an invalid-state error.
	tests := []struct {
		op   string
		call func(c *Cloud) func(context.Context, []string) (map[string]error, error)
		want map[cloudprovider.InstanceState]cloudprovider.InstanceState
	}{
		{op: cloudprovider.OpStart, call: func(c *Cloud) func(context.Context, []string) (map[string]error, error) { return c.StartInstances },
			want: map[cloudprovider.InstanceState]cloudprovider.InstanceState{
				cloudprovider.StatePending: cloudprovider.StatePending, cloudprovider.StateRunning: cloudprovider.StateRunning,
				cloudprovider.StateStopped: cloudprovider.StatePending,
			}},
		{op: cloudprovider.OpStop, call: func(c *Cloud) func(context.Context, []string) (map[string]error, error) { return plainStop(c) },
			want: map[cloudprovider.InstanceState]cloudprovider.InstanceState{
				cloudprovider.StateRunning: cloudprovider.StateStopping, cloudprovider.StateStopping: cloudprovider.StateStopping,
				cloudprovider.StateStopped: cloudprovider.StateStopped,
			}},
		{op: cloudprovider.OpTerminate, call: func(c *Cloud) func(context.Context, []string) (map[string]error, error) { return c.TerminateInstances },
			want: map[cloudprovider.InstanceState]cloudprovider.InstanceState{
				cloudprovider.StatePending: cloudprovider.StateShuttingDown, cloudprovider.StateRunning: cloudprovider.StateShuttingDown,
				cloudprovider.StateStopping: cloudprovider.StateShuttingDown, cloudprovider.StateStopped: cloudprovider.StateShuttingDown,
				cloudprovider.StateShuttingDown: cloudprovider.StateShuttingDown, cloudprovider.StateTerminated: cloudprovider.StateTerminated,
			}},
	}
	for _, tt := range tests {
		for from, prepare := range states {
			t.Run(tt.op+" "+string(from), func(t *testing.T) {
				c, clk := newCloud(t, Options{})
				id := prepare(t, c, clk)
				wantState(t, c, id, from)
				err := act(t, tt.call(c), id)
				want, valid := tt.want[from]
				if !valid {
					wantCode(t, err, cloudprovider.CodeInvalidState)
					want = from
				} else if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				wantState(t, c, id, want)
			})
		}
		t.Run(tt.op+" unknown", func(t *testing.T) {
			c, _ := newCloud(t, Options{})
			wantCode(t, act(t, tt.call(c), "i-00000000000000000"), cloudprovider.CodeNotFound)
		})
	}
}

func TestTerminatedRetention(t *testing.T) {
	c, clk := newCloud(t, Options{TerminatedRetention: 10 * time.Minute})
	inst := create(t, c, request("a"))
	if err := act(t, c.TerminateInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.TerminateDelay + 10*time.Minute - tick)
	wantState(t, c, inst.ID, cloudprovider.StateTerminated)
	clk.Step(tick)
	wantState(t, c, inst.ID, "")
	if n := len(c.Instances()); n != 0 {
		t.Errorf("%d instances remembered", n)
	}
}

func TestListByTags(t *testing.T) {
	c, clk := newCloud(t, Options{})
	tagged := func(token, pool string) *cloudprovider.Instance {
		req := request(token)
		req.Tags[v1beta1.TagNodePool] = pool
		return create(t, c, req)
	}
	a, b, gone := tagged("a", "web"), tagged("b", "batch"), tagged("c", "web")
	if err := act(t, c.TerminateInstances, gone.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.TerminateDelay)

	list := func(tags map[string]string) []string {
		instances, err := c.ListInstances(context.Background(), tags)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, inst := range instances {
			ids = append(ids, inst.ID)
		}
		return ids
	}
	if got := list(map[string]string{v1beta1.TagCluster: "test", v1beta1.TagNodePool: "web"}); len(got) != 1 || got[0] != a.ID {
		t.Errorf("web instances = %v, want [%s]", got, a.ID)
	}
	if got := list(map[string]string{v1beta1.TagCluster: "test"}); len(got) != 2 {
		t.Errorf("cluster instances = %v, want %s and %s", got, a.ID, b.ID)
	}
	if got := list(map[string]string{v1beta1.TagCluster: "other"}); len(got) != 0 {
		t.Errorf("other cluster's instances = %v", got)
	}
}

func TestExternalChanges(t *testing.T) {
	c, clk := newCloud(t, Options{})
	inst := running(t, c, clk, request("a"))
	if err := c.StopExternally(inst.ID); err != nil {
		t.Fatal(err)
	}
	wantState(t, c, inst.ID, cloudprovider.StateStopping)
	clk.Step(c.physics.StopDelay)
	if err := c.StartExternally(inst.ID); err != nil {
		t.Fatal(err)
	}
	wantState(t, c, inst.ID, cloudprovider.StatePending)
	if err := c.TerminateExternally(inst.ID); err != nil {
		t.Fatal(err)
	}
	wantState(t, c, inst.ID, cloudprovider.StateShuttingDown)
	if err := c.StopExternally(inst.ID); err == nil {
		t.Errorf("stopping a shutting-down instance succeeded")
	}

	other := create(t, c, request("b"))
	if err := c.Vanish(other.ID); err != nil {
		t.Fatal(err)
	}
	wantState(t, c, other.ID, "")
	if again := create(t, c, request("b")); again.ID == other.ID {
		t.Errorf("the token of a vanished instance still returns it")
	}
	vanish := func(id string) error { return c.Vanish(id) }
	for _, change := range []func(string) error{c.StopExternally, c.StartExternally, c.TerminateExternally, vanish} {
		wantCode(t, change(other.ID), cloudprovider.CodeNotFound)
	}
	// Vanishing several at once forgets none when one is unknown.
	kept := create(t, c, request("c"))
	wantCode(t, c.Vanish(kept.ID, other.ID), cloudprovider.CodeNotFound)
	wantState(t, c, kept.ID, cloudprovider.StatePending)
	if calls := c.Calls(); calls[cloudprovider.OpStop]+calls[cloudprovider.OpStart]+calls[cloudprovider.OpTerminate] != 0 {
		t.Errorf("external changes counted as calls: %v", calls)
	}
}

// InstanceTypes does not tell which offerings the injected faults put out of capacity, as
// EC2's DescribeInstanceTypeOfferings does not: only a launch or a start finds out.
func TestInstanceTypes(t *testing.T) {
	c, _ := newCloud(t, Options{})
	c.SetFaults(Faults{InsufficientCapacity: []Offering{{InstanceType: "m5.large", Zone: "fake-1b"}}})
	class := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{
		InstanceTypes: []string{"m5.large", "c5.large", "no.such"},
		Zones:         []string{"fake-1b", "fake-1c"},
		Faults:        &v1beta1.FakeFaults{InsufficientCapacity: []v1beta1.FakeOffering{{Zone: "fake-1c"}}},
	}}
	types, err := c.InstanceTypes(context.Background(), class)
	if err != nil {
		t.Fatal(err)
	}
	if len(types) != 2 || types[0].Name != "m5.large" || types[1].Name != "c5.large" {
		t.Fatalf("types = %v", types)
	}
	for _, it := range types {
		if len(it.Offerings) != 4 {
			t.Fatalf("%s has %d offerings, want 4", it.Name, len(it.Offerings))
		}
		for _, o := range it.Offerings {
			if !o.Available {
				t.Errorf("%s in %s %s is unavailable: an injected capacity fault leaked into InstanceTypes", it.Name, o.Zone, o.CapacityType)
			}
		}
	}
	// The answer is a copy.
	types[0].Offerings[0].PricePerHour = 0
	types[0].Capacity["cpu"] = types[0].Overhead.KubeReserved["cpu"]
	types[0].Attributes[v1beta1.LabelInstanceCPU] = "0"
	again, _ := c.InstanceTypes(context.Background(), nil)
	if again[0].Offerings[0].PricePerHour == 0 || again[0].Capacity.Cpu().Value() != 2 || again[0].Attributes[v1beta1.LabelInstanceCPU] != "2" || len(again) != len(DefaultCatalog()) {
		t.Errorf("the catalogue changed through a returned type")
	}
	if got := c.Calls()[cloudprovider.OpInstanceTypes]; got != 2 {
		t.Errorf("InstanceTypes calls = %d", got)
	}
}

// An offering the catalogue does not sell is unavailable in InstanceTypes, and a launch
// passes it over.
func TestInstanceTypesKeepTheCataloguesUnavailableOfferings(t *testing.T) {
	catalog := DefaultCatalog()[:1]
	for n := range catalog[0].Offerings {
		catalog[0].Offerings[n].Available = catalog[0].Offerings[n].Zone == "fake-1c"
	}
	c, _ := newCloud(t, Options{Catalog: catalog})
	types, err := c.InstanceTypes(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range types[0].Offerings {
		if o.Available != (o.Zone == "fake-1c") {
			t.Errorf("%s in %s %s: available %v, as the catalogue says %v", types[0].Name, o.Zone, o.CapacityType, o.Available, o.Zone == "fake-1c")
		}
	}
	if inst := create(t, c, request("a")); inst.Zone != "fake-1c" {
		t.Errorf("launched in %s, which the catalogue does not sell", inst.Zone)
	}
}

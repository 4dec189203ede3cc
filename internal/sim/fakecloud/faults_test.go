package fakecloud

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

func TestErrorFaults(t *testing.T) {
	tests := []struct {
		name      string
		fault     ErrorFault
		low, high int
		wantCode  cloudprovider.ErrorCode
	}{
		{name: "always", fault: ErrorFault{Probability: 1, Code: cloudprovider.CodeQuotaExceeded}, low: 1000, high: 1000, wantCode: cloudprovider.CodeQuotaExceeded},
		{name: "never", fault: ErrorFault{Probability: 0}, low: 0, high: 0},
		{name: "30%", fault: ErrorFault{Probability: 0.3}, low: 250, high: 350, wantCode: cloudprovider.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCloud(t, Options{Seed: 42})
			c.SetFaults(Faults{Errors: map[string]ErrorFault{cloudprovider.OpGet: tt.fault}})
			failed := 0
			for range 1000 {
				_, err := c.DescribeInstances(context.Background(), []string{"i-1"})
				if err != nil {
					wantCode(t, err, tt.wantCode)
					failed++
				}
			}
			if failed < tt.low || failed > tt.high {
				t.Errorf("%d of 1000 calls failed, want %d to %d", failed, tt.low, tt.high)
			}
			if got := c.Calls()[cloudprovider.OpGet]; got != 1000 {
				t.Errorf("counted %d calls", got)
			}
		})
	}
}

func TestFailedCallChangesNothing(t *testing.T) {
	c, clk := newCloud(t, Options{})
	inst := stopped(t, c, clk, request("a"))
	c.SetFaults(Faults{Errors: map[string]ErrorFault{
		cloudprovider.OpStart:  {Probability: 1},
		cloudprovider.OpCreate: {Probability: 1},
	}})
	errs, err := c.StartInstances(context.Background(), []string{inst.ID})
	wantCode(t, err, cloudprovider.CodeInternal)
	if len(errs) != 0 {
		t.Errorf("per-instance errors with a whole-call error: %v", errs)
	}
	_, err = c.Create(context.Background(), request("b"))
	wantCode(t, err, cloudprovider.CodeInternal)

	c.SetFaults(Faults{})
	wantState(t, c, inst.ID, cloudprovider.StateStopped)
	if n := len(c.Instances()); n != 1 {
		t.Errorf("%d instances after a failed create", n)
	}
}

func TestRateLimit(t *testing.T) {
	c, clk := newCloud(t, Options{})
	c.SetFaults(Faults{RateLimits: map[string]RateLimit{cloudprovider.OpList: {PerSecond: 2, Burst: 3}}})
	list := func() error {
		_, err := c.ListInstances(context.Background(), nil)
		return err
	}
	for n := range 3 {
		if err := list(); err != nil {
			t.Fatalf("call %d within the burst: %v", n, err)
		}
	}
	wantCode(t, list(), cloudprovider.CodeThrottled)
	clk.Step(500 * time.Millisecond)
	if err := list(); err != nil {
		t.Fatalf("call after a refill: %v", err)
	}
	wantCode(t, list(), cloudprovider.CodeThrottled)
	if _, err := c.DescribeInstances(context.Background(), nil); err != nil {
		t.Errorf("another operation is throttled: %v", err)
	}
	if got := c.Faults().RateLimits[cloudprovider.OpList]; got.Burst != 3 {
		t.Errorf("Faults() = %+v", got)
	}
}

func TestNodeClassFaults(t *testing.T) {
	c, clk := newCloud(t, Options{})
	flaky := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{Errors: []v1beta1.FakeOperationFault{
		{Operation: v1beta1.FakeOperationStart, Percent: 100, Error: v1beta1.FakeErrorInsufficientCapacity},
		{Operation: v1beta1.FakeOperationStop, Percent: 100},
	}}}}
	req := request("flaky")
	req.NodeClass = flaky
	bad := create(t, c, req)
	good := stopped(t, c, clk, request("good"))

	errs, err := c.StopInstances(context.Background(), []string{bad.ID}, false)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, errs[bad.ID], cloudprovider.CodeInternal)
	wantState(t, c, bad.ID, cloudprovider.StateRunning)

	if err := c.StopExternally(bad.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.StopDelay)
	errs, err = c.StartInstances(context.Background(), []string{bad.ID, good.ID})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, errs[bad.ID], cloudprovider.CodeInsufficientCapacity)
	if errs[good.ID] != nil {
		t.Errorf("the instance without class faults failed: %v", errs[good.ID])
	}
	wantState(t, c, bad.ID, cloudprovider.StateStopped)
	wantState(t, c, good.ID, cloudprovider.StatePending)

	failing := flaky.DeepCopy()
	failing.Spec.Faults.Errors = []v1beta1.FakeOperationFault{{Operation: v1beta1.FakeOperationCreate, Percent: 100, Error: v1beta1.FakeErrorQuotaExceeded}}
	req = request("failing")
	req.NodeClass = failing
	_, err = c.Create(context.Background(), req)
	wantCode(t, err, cloudprovider.CodeQuotaExceeded)
}

func TestNeverRegister(t *testing.T) {
	c, clk := newCloud(t, Options{})
	c.SetFaults(Faults{NeverRegister: 1})
	lost := create(t, c, request("lost"))
	c.SetFaults(Faults{})
	req := request("class")
	req.NodeClass = &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{NeverRegisterPercent: 100}}}
	lostByClass := create(t, c, req)
	fine := create(t, c, request("fine"))

	clk.Step(time.Hour)
	for _, inst := range []*cloudprovider.Instance{lost, lostByClass} {
		wantState(t, c, inst.ID, cloudprovider.StateRunning)
		if v := view(t, c, inst.ID); v.Phase != physics.NodeAbsent {
			t.Errorf("%s: phase %v, want Absent", inst.ID, v.Phase)
		}
	}
	if v := view(t, c, fine.ID); v.Phase != physics.NodeReady {
		t.Errorf("phase %v, want Ready", v.Phase)
	}
}

// A start needs capacity again, as on EC2: a stopped instance whose offering is out of
// capacity is refused, alone in its batch; a running one is left running; once capacity
// is back it starts.
func TestStartOfAStoppedInstanceOutOfCapacityIsRefused(t *testing.T) {
	c, clk := newCloud(t, Options{})
	parked := stopped(t, c, clk, request("parked"))
	busy := running(t, c, clk, request("busy"))
	full := Faults{InsufficientCapacity: []Offering{{InstanceType: parked.Type, Zone: parked.Zone}}}
	c.SetFaults(full)
	elsewhere := stopped(t, c, clk, request("elsewhere"))
	if elsewhere.Type == parked.Type && elsewhere.Zone == parked.Zone {
		t.Fatalf("the launch used the offering out of capacity: %s in %s", elsewhere.Type, elsewhere.Zone)
	}

	errs, err := c.StartInstances(context.Background(), []string{parked.ID, busy.ID, elsewhere.ID})
	if err != nil {
		t.Fatalf("the whole call failed: %v", err)
	}
	wantCode(t, errs[parked.ID], cloudprovider.CodeInsufficientCapacity)
	wantOfferings(t, errs[parked.ID], []cloudprovider.OfferingKey{{InstanceType: parked.Type, Zone: parked.Zone, CapacityType: parked.CapacityType}})
	if errs[busy.ID] != nil || errs[elsewhere.ID] != nil {
		t.Errorf("instances that need no capacity or have it failed: %v", errs)
	}
	wantState(t, c, parked.ID, cloudprovider.StateStopped)
	wantState(t, c, busy.ID, cloudprovider.StateRunning)
	wantState(t, c, elsewhere.ID, cloudprovider.StatePending)

	c.SetFaults(Faults{})
	if err := act(t, c.StartInstances, parked.ID); err != nil {
		t.Fatalf("start once capacity is back: %v", err)
	}
	wantState(t, c, parked.ID, cloudprovider.StatePending)
	if got := c.Calls()[cloudprovider.OpStart]; got != 2 {
		t.Errorf("counted %d start calls, want 2", got)
	}
}

// With StopsHang, a stop never ends: the instance stays stopping however long the clock
// runs, until a forced stop ends it after the usual stop delay. A forced stop of a
// stopped instance does nothing.
func TestStopsHangUntilForced(t *testing.T) {
	c, clk := newCloud(t, Options{})
	inst := running(t, c, clk, request("a"))
	c.SetFaults(Faults{StopsHang: 1})
	if err := act(t, plainStop(c), inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(100 * c.physics.StopDelay)
	wantState(t, c, inst.ID, cloudprovider.StateStopping)

	if err := act(t, c.ForceStopInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.StopDelay)
	wantState(t, c, inst.ID, cloudprovider.StateStopped)
	if err := act(t, c.ForceStopInstances, inst.ID); err != nil {
		t.Errorf("forcing the stop of a stopped instance: %v", err)
	}
	wantState(t, c, inst.ID, cloudprovider.StateStopped)
}

// A fault may take one capacity type away: with spot out of capacity everywhere, a launch
// that may use either buys on demand, one that may only use spot fails naming the spot
// offerings it tried, and once the fault is cleared spot (the cheaper) is bought again.
func TestInsufficientCapacityOfOneCapacityType(t *testing.T) {
	c, _ := newCloud(t, Options{})
	c.SetFaults(Faults{InsufficientCapacity: []Offering{{CapacityType: v1beta1.CapacityTypeSpot}}})
	either := create(t, c, request("either"))
	if either.CapacityType != v1beta1.CapacityTypeOnDemand {
		t.Fatalf("with spot out of capacity the launch bought %s, want on-demand", either.CapacityType)
	}
	spotOnly := request("spot-only")
	spotOnly.Requirements = []corev1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeSpot}}}
	_, err := c.Create(context.Background(), spotOnly)
	wantCode(t, err, cloudprovider.CodeInsufficientCapacity)
	refused := offeringsOf(err)
	if len(refused) == 0 {
		t.Fatal("the refusal names no offering")
	}
	for _, key := range refused {
		if key.CapacityType != v1beta1.CapacityTypeSpot {
			t.Errorf("the refusal names %s, which is not spot", key)
		}
	}

	c.SetFaults(Faults{})
	spotOnly.ClientToken = "spot-again"
	if again := create(t, c, spotOnly); again.CapacityType != v1beta1.CapacityTypeSpot {
		t.Fatalf("with the fault cleared the launch bought %s, want spot", again.CapacityType)
	}
	if cheapest := create(t, c, request("cheapest")); cheapest.CapacityType != v1beta1.CapacityTypeSpot {
		t.Fatalf("with the fault cleared the cheapest launch bought %s, want spot", cheapest.CapacityType)
	}
}

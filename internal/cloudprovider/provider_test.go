package cloudprovider_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

var epoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// batching bounds the batched calls of the providers under test. Their clouds change on
// fake clocks while real time hardly passes, so every ask describes.
var batching = cloudprovider.BatchOptions{MaxItems: 100, Timeout: 10 * time.Second, DescribeMaxAge: -1}

// setup returns a fake cloud on its own fake clock, and a provider over it whose
// unavailable offerings last a minute on another fake clock.
type setup struct {
	cloud      *fakecloud.Cloud
	cloudClock *testingclock.FakeClock
	clock      *testingclock.FakeClock
	marks      *cloudprovider.UnavailableOfferings
	provider   cloudprovider.CloudProvider
}

func newSetup(t *testing.T) setup {
	t.Helper()
	physics := physics.DefaultPhysics()
	physics.JitterPercent = 0
	s := setup{cloudClock: testingclock.NewFakeClock(epoch), clock: testingclock.NewFakeClock(epoch)}
	s.cloud = fakecloud.New(fakecloud.Options{Clock: s.cloudClock, Physics: physics})
	s.marks = cloudprovider.NewUnavailableOfferings(time.Minute, s.clock)
	s.provider = cloudprovider.New(s.cloud, batching, s.marks)
	return s
}

// m5Large is a node class of m5.large only; on demand it costs the same in every zone,
// so that launches go to the first zone left.
var m5Large = &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"m5.large"}}}

func onDemand(zone string) cloudprovider.OfferingKey {
	return cloudprovider.OfferingKey{InstanceType: "m5.large", Zone: zone, CapacityType: v1beta1.CapacityTypeOnDemand}
}

func launchRequest(token string) *cloudprovider.CreateRequest {
	return &cloudprovider.CreateRequest{ClientToken: token, NodeClass: m5Large, Requirements: []corev1.NodeSelectorRequirement{
		{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}},
	}}
}

// availability returns whether each m5.large offering is available, by key.
func availability(t *testing.T, types []*cloudprovider.InstanceType) map[cloudprovider.OfferingKey]bool {
	t.Helper()
	out := map[cloudprovider.OfferingKey]bool{}
	for _, it := range types {
		for _, o := range it.Offerings {
			out[it.Key(o)] = o.Available
		}
	}
	return out
}

func TestInstanceTypesShowTheMarkedOfferingsUnavailable(t *testing.T) {
	s := newSetup(t)
	ctx := context.Background()
	s.marks.Mark(onDemand("fake-1a"), "test")

	types, err := s.provider.InstanceTypes(ctx, m5Large)
	if err != nil {
		t.Fatal(err)
	}
	got := availability(t, types)
	if len(got) != 6 {
		t.Fatalf("offerings = %v, want m5.large in 3 zones, on demand and spot", got)
	}
	for k, available := range got {
		if available != (k != onDemand("fake-1a")) {
			t.Errorf("%s available %v", k, available)
		}
	}
	direct, _ := s.cloud.InstanceTypes(ctx, m5Large)
	if !availability(t, direct)[onDemand("fake-1a")] {
		t.Error("the cloud's own answer says the marked offering is unavailable")
	}

	s.clock.Step(time.Minute)
	types, _ = s.provider.InstanceTypes(ctx, m5Large)
	if !availability(t, types)[onDemand("fake-1a")] {
		t.Error("the offering stays unavailable after its mark expired")
	}
}

func TestCreateAvoidsTheMarkedOfferings(t *testing.T) {
	s := newSetup(t)
	ctx := context.Background()
	s.marks.Mark(onDemand("fake-1a"), "test")
	req := launchRequest("a")
	inst, err := s.provider.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Zone != "fake-1b" {
		t.Errorf("launched in %s, want fake-1b: fake-1a is marked", inst.Zone)
	}
	if req.Unavailable != nil {
		t.Errorf("the caller's request was changed: Unavailable = %v", req.Unavailable)
	}
}

func TestARefusedCreateMarksTheOfferingsItTried(t *testing.T) {
	s := newSetup(t)
	ctx := context.Background()
	s.cloud.SetFaults(fakecloud.Faults{InsufficientCapacity: []fakecloud.Offering{{InstanceType: "m5.large", Zone: "fake-1a"}, {InstanceType: "m5.large", Zone: "fake-1b"}}})
	// The launch falls through to fake-1c; no error names what it passed over.
	if inst, err := s.provider.Create(ctx, launchRequest("a")); err != nil || inst.Zone != "fake-1c" {
		t.Fatalf("Create = %v, %v; want an instance in fake-1c", inst, err)
	}
	s.cloud.SetFaults(fakecloud.Faults{InsufficientCapacity: []fakecloud.Offering{{InstanceType: "m5.large"}}})

	_, err := s.provider.Create(ctx, launchRequest("b"))
	if !errors.Is(err, cloudprovider.ErrInsufficientCapacity) {
		t.Fatalf("Create = %v, want InsufficientCapacity", err)
	}
	want := []cloudprovider.OfferingKey{onDemand("fake-1a"), onDemand("fake-1b"), onDemand("fake-1c")}
	if got := s.marks.Keys(); !slices.Equal(got, want) {
		t.Fatalf("marked %v, want %v", got, want)
	}
	if reason := s.marks.List()[0].Reason; reason != "Create: InsufficientCapacity" {
		t.Errorf("reason = %q", reason)
	}

	// The next launch does not try them, so it does not extend their marks either.
	s.clock.Step(30 * time.Second)
	_, err = s.provider.Create(ctx, launchRequest("c"))
	var cloudErr *cloudprovider.Error
	if !errors.As(err, &cloudErr) || cloudErr.Code != cloudprovider.CodeInsufficientCapacity || len(cloudErr.Offerings) != 0 {
		t.Fatalf("Create = %v, want InsufficientCapacity that names no offering tried", err)
	}
	if expires := s.marks.List()[0].Expires; !expires.Equal(epoch.Add(time.Minute)) {
		t.Errorf("the mark expires at %s, want %s: a launch that did not try the offering extended it", expires, epoch.Add(time.Minute))
	}

	// Once the marks expire and capacity is back, the cheapest offering is used again.
	s.clock.Step(30 * time.Second)
	s.cloud.SetFaults(fakecloud.Faults{})
	if inst, err := s.provider.Create(ctx, launchRequest("d")); err != nil || inst.Zone != "fake-1a" {
		t.Fatalf("Create = %v, %v; want an instance in fake-1a", inst, err)
	}
}

func TestARefusedStartMarksTheInstancesOffering(t *testing.T) {
	s := newSetup(t)
	ctx := context.Background()
	inst, err := s.provider.Create(ctx, launchRequest("a"))
	if err != nil {
		t.Fatal(err)
	}
	s.cloudClock.Step(physics.DefaultPhysics().LaunchDelay)
	if err := s.provider.Stop(ctx, inst.ID, false); err != nil {
		t.Fatal(err)
	}
	s.cloudClock.Step(physics.DefaultPhysics().StopDelay)
	s.cloud.SetFaults(fakecloud.Faults{InsufficientCapacity: []fakecloud.Offering{{InstanceType: inst.Type, Zone: inst.Zone}}})

	if err := s.provider.Start(ctx, inst.ID); !errors.Is(err, cloudprovider.ErrInsufficientCapacity) {
		t.Fatalf("Start = %v, want InsufficientCapacity", err)
	}
	refused := cloudprovider.OfferingKey{InstanceType: inst.Type, Zone: inst.Zone, CapacityType: inst.CapacityType}
	if got := s.marks.Keys(); !slices.Equal(got, []cloudprovider.OfferingKey{refused}) {
		t.Fatalf("marked %v, want %v", got, refused)
	}
	if reason := s.marks.List()[0].Reason; reason != "Start: InsufficientCapacity" {
		t.Errorf("reason = %q", reason)
	}
	types, _ := s.provider.InstanceTypes(ctx, m5Large)
	if availability(t, types)[refused] {
		t.Error("InstanceTypes offers the offering whose start was refused")
	}
}

// A nil cache is a fresh one: the provider still learns and heeds refusals.
func TestANilCacheIsAFreshOne(t *testing.T) {
	cloud := fakecloud.New(fakecloud.Options{Clock: testingclock.NewFakeClock(epoch)})
	provider := cloudprovider.New(cloud, batching, nil)
	cloud.SetFaults(fakecloud.Faults{InsufficientCapacity: []fakecloud.Offering{{InstanceType: "m5.large", Zone: "fake-1a"}}})
	req := launchRequest("a")
	req.Requirements = append(req.Requirements, corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"fake-1a"}})
	if _, err := provider.Create(context.Background(), req); !errors.Is(err, cloudprovider.ErrInsufficientCapacity) {
		t.Fatalf("Create = %v, want InsufficientCapacity", err)
	}
	types, err := provider.InstanceTypes(context.Background(), m5Large)
	if err != nil {
		t.Fatal(err)
	}
	if availability(t, types)[onDemand("fake-1a")] {
		t.Error("the refused offering is still offered")
	}
}

// stopCalls is the fake cloud with its StopInstances calls recorded, by mode.
type stopCalls struct {
	*fakecloud.Cloud
	mu    sync.Mutex
	calls []stopCall
}

type stopCall struct {
	ids       []string
	hibernate bool
}

func (s *stopCalls) StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error) {
	s.mu.Lock()
	s.calls = append(s.calls, stopCall{ids: slices.Clone(ids), hibernate: hibernate})
	s.mu.Unlock()
	return s.Cloud.StopInstances(ctx, ids, hibernate)
}

// Stops and hibernations go in calls of their own mode, and an instance that cannot
// hibernate gets its own Unsupported error.
func TestStopsAndHibernationsGoInCallsOfTheirMode(t *testing.T) {
	s := newSetup(t)
	ctx := context.Background()
	able := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"m5.large"}, Hibernate: true}}
	var ids []string
	for n, class := range []*v1beta1.FakeNodeClass{able, able, m5Large} {
		req := launchRequest(fmt.Sprint(n))
		req.NodeClass = class
		inst, err := s.provider.Create(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, inst.ID)
	}
	s.cloudClock.Step(physics.DefaultPhysics().LaunchDelay)
	recorded := &stopCalls{Cloud: s.cloud}
	provider := cloudprovider.New(recorded, batching, s.marks)

	errs := make([]error, 4)
	var wg sync.WaitGroup
	for n, stop := range []struct {
		id        string
		hibernate bool
	}{{ids[0], true}, {ids[1], false}, {ids[2], true}, {ids[2], false}} {
		wg.Go(func() { errs[n] = provider.Stop(ctx, stop.id, stop.hibernate) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || errs[3] != nil {
		t.Errorf("stops = %v, want the hibernation of %s and the plain stops to succeed", errs, ids[0])
	}
	if !errors.Is(errs[2], cloudprovider.ErrUnsupported) {
		t.Errorf("hibernating %s, launched without hibernation: %v, want Unsupported", ids[2], errs[2])
	}
	byMode := map[bool][]string{}
	for _, call := range recorded.calls {
		byMode[call.hibernate] = append(byMode[call.hibernate], call.ids...)
	}
	slices.Sort(byMode[true])
	slices.Sort(byMode[false])
	wantHibernated, wantStopped := []string{ids[0], ids[2]}, []string{ids[1], ids[2]}
	slices.Sort(wantHibernated)
	slices.Sort(wantStopped)
	if !slices.Equal(byMode[true], wantHibernated) || !slices.Equal(byMode[false], wantStopped) {
		t.Errorf("hibernating calls carried %v, stopping calls %v; want %v and %v", byMode[true], byMode[false], wantHibernated, wantStopped)
	}
	if run, _ := s.cloud.CurrentRun(ids[0]); !run.Hibernated {
		t.Errorf("%s did not hibernate", ids[0])
	}
}

// refusingFirst is a cloud whose launches succeed after it found some offerings out of
// capacity, as an EC2 fleet that tries its overrides in turn.
type refusingFirst struct {
	*fakecloud.Cloud
	refused []cloudprovider.OfferingKey
}

func (r refusingFirst) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	instance, err := r.Cloud.Create(ctx, req)
	if instance != nil {
		instance.RefusedOfferings = r.refused
	}
	return instance, err
}

func TestALaunchMarksTheOfferingsRefusedOnTheWay(t *testing.T) {
	s := newSetup(t)
	refused := []cloudprovider.OfferingKey{onDemand("fake-1a"), onDemand("fake-1b")}
	provider := cloudprovider.New(refusingFirst{Cloud: s.cloud, refused: refused}, batching, s.marks)
	if _, err := provider.Create(context.Background(), launchRequest("a")); err != nil {
		t.Fatal(err)
	}
	if got := s.marks.Keys(); !slices.Equal(got, refused) {
		t.Fatalf("marked %v, want the offerings refused before the launch, %v", got, refused)
	}
	types, err := provider.InstanceTypes(context.Background(), m5Large)
	if err != nil {
		t.Fatal(err)
	}
	if a := availability(t, types); a[onDemand("fake-1a")] || a[onDemand("fake-1b")] || !a[onDemand("fake-1c")] {
		t.Fatalf("availability %v: want fake-1a and fake-1b unavailable, fake-1c available", a)
	}
}

// Get tells an instance that is not the cluster's from one the cloud does not know:
// NotOwned, naming how it is tagged. A terminated one is gone whoever owns it.
func TestGetTellsAnInstanceNotOwnedFromOneNotFound(t *testing.T) {
	physics := physics.DefaultPhysics()
	physics.JitterPercent = 0
	cloud := fakecloud.New(fakecloud.Options{Clock: testingclock.NewFakeClock(epoch), Physics: physics, ClusterName: "test"})
	provider := cloudprovider.New(cloud, batching, nil)
	ctx := context.Background()
	launch := func(token, cluster string) *cloudprovider.Instance {
		t.Helper()
		req := launchRequest(token)
		req.Tags = map[string]string{v1beta1.TagCluster: cluster}
		instance, err := provider.Create(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return instance
	}
	ours, theirs, terminated := launch("ours", "test"), launch("theirs", "other"), launch("terminated", "other")
	untagged := launch("untagged", "test")
	if err := cloud.RemoveTag(untagged.ID, v1beta1.TagCluster); err != nil {
		t.Fatal(err)
	}
	if err := cloud.TerminateExternally(terminated.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := provider.Get(ctx, ours.ID); err != nil {
		t.Errorf("Get(ours) = %v", err)
	}
	for id, want := range map[string]string{theirs.ID: "it is tagged stratos.sh/cluster=other", untagged.ID: "it carries no stratos.sh/cluster tag"} {
		_, err := provider.Get(ctx, id)
		var cloudErr *cloudprovider.Error
		if !errors.Is(err, cloudprovider.ErrNotOwned) || !errors.As(err, &cloudErr) || cloudErr.Message != want || cloudErr.InstanceID != id {
			t.Errorf("Get(%s) = %v, want NotOwned saying %q", id, err, want)
		}
	}
	if instance, err := provider.Get(ctx, terminated.ID); err != nil || instance.State != cloudprovider.StateShuttingDown {
		t.Errorf("Get(terminated) = %v, %v; want the shutting-down instance", instance, err)
	}
	if _, err := provider.Get(ctx, "i-00000000000000000"); !errors.Is(err, cloudprovider.ErrNotFound) {
		t.Errorf("Get(unknown) = %v, want NotFound", err)
	}
}

package fakecloud

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/conversion"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// newRemote serves a cloud on a fake clock over loopback HTTP and returns a client of it.
func newRemote(t *testing.T) (*Cloud, *testingclock.FakeClock, *Remote, *httptest.Server) {
	t.Helper()
	c, clk := newCloud(t, Options{})
	srv := httptest.NewServer(NewServer(c))
	t.Cleanup(srv.Close)
	remote, err := NewRemote(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c, clk, remote, srv
}

// sameValue compares quantities and times by value: JSON keeps neither's representation.
var sameValue = conversion.EqualitiesOrDie(
	func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 },
	func(a, b time.Time) bool { return a.Equal(b) },
)

// wantSame fails unless the remote and in-process answers are equal in value.
func wantSame(t *testing.T, what string, remote, local any) {
	t.Helper()
	if !sameValue.DeepEqual(remote, local) {
		t.Errorf("%s differs across the wire:\nremote %#v\nlocal  %#v", what, remote, local)
	}
}

func TestRemoteCreateIsIdempotentByToken(t *testing.T) {
	c, _, remote, _ := newRemote(t)
	if remote.Name() != "fake" {
		t.Errorf("Name() = %q", remote.Name())
	}
	first, err := remote.Create(context.Background(), request("claim-uid"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := remote.Create(context.Background(), request("claim-uid"))
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || len(c.Instances()) != 1 {
		t.Fatalf("second create launched %s next to %s", again.ID, first.ID)
	}
	local := c.Instances()[0]
	wantSame(t, "the created instance", first, &local)
}

func TestRemoteBatchCallsCarryPerInstanceErrors(t *testing.T) {
	c, clk, remote, _ := newRemote(t)
	id := running(t, c, clk, request("a")).ID
	ctx := context.Background()

	errs, err := remote.StopInstances(ctx, []string{id, "i-unknown"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var notFound *cloudprovider.Error
	if len(errs) != 1 || !errors.Is(errs["i-unknown"], cloudprovider.ErrNotFound) || !errors.As(errs["i-unknown"], &notFound) {
		t.Fatalf("stop errors = %v, want NotFound for i-unknown only", errs)
	}
	if notFound.Op != cloudprovider.OpStop || notFound.InstanceID != "i-unknown" || notFound.Message == "" {
		t.Errorf("the error lost its details: %+v", notFound)
	}
	wantState(t, c, id, cloudprovider.StateStopping)

	// Starting a stopping instance is refused for that instance only.
	errs, err = remote.StartInstances(ctx, []string{id})
	if err != nil || !errors.Is(errs[id], cloudprovider.ErrInvalidState) {
		t.Fatalf("start of a stopping instance = %v, %v; want InvalidState", errs, err)
	}
	clk.Step(c.physics.StopDelay)
	if errs, err := remote.StartInstances(ctx, []string{id}); err != nil || len(errs) != 0 {
		t.Fatalf("start of a stopped instance = %v, %v", errs, err)
	}
	wantState(t, c, id, cloudprovider.StatePending)
	if errs, err := remote.TerminateInstances(ctx, []string{id}); err != nil || len(errs) != 0 {
		t.Fatalf("terminate = %v, %v", errs, err)
	}
	wantState(t, c, id, cloudprovider.StateShuttingDown)
}

// A hibernating stop crosses the wire: the instance launched for hibernation
// hibernates, the other refuses with Unsupported.
func TestRemoteStopCarriesHibernate(t *testing.T) {
	c, clk, remote, _ := newRemote(t)
	able := running(t, c, clk, hibernating("able")).ID
	plain := create(t, c, request("plain")).ID
	clk.Step(c.physics.LaunchDelay)
	errs, err := remote.StopInstances(context.Background(), []string{able, plain}, true)
	if err != nil {
		t.Fatal(err)
	}
	if errs[able] != nil {
		t.Errorf("hibernating %s: %v", able, errs[able])
	}
	wantCode(t, errs[plain], cloudprovider.CodeUnsupported)
	if run, _ := c.CurrentRun(able); !run.Hibernated {
		t.Errorf("the instance stopped without hibernation: %+v", run)
	}
	wantState(t, c, plain, cloudprovider.StateRunning)
}

// The offerings out of capacity cross the wire both ways: those a request says are
// unavailable, and those a refused launch or start names, which the operator marks.
func TestRemoteCarriesOfferingsOutOfCapacity(t *testing.T) {
	c, clk, remote, _ := newRemote(t)
	ctx := context.Background()
	parked := stopped(t, c, clk, request("parked"))
	parkedKey := cloudprovider.OfferingKey{InstanceType: parked.Type, Zone: parked.Zone, CapacityType: parked.CapacityType}
	c.SetFaults(Faults{InsufficientCapacity: []Offering{{InstanceType: parked.Type, Zone: parked.Zone}}})

	errs, err := remote.StartInstances(ctx, []string{parked.ID})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, errs[parked.ID], cloudprovider.CodeInsufficientCapacity)
	wantOfferings(t, errs[parked.ID], []cloudprovider.OfferingKey{parkedKey})

	class := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{parked.Type}, Zones: []string{parked.Zone}}}
	req := request("refused")
	req.NodeClass = class
	_, err = remote.Create(ctx, req)
	wantCode(t, err, cloudprovider.CodeInsufficientCapacity)
	_, local := c.Create(ctx, req)
	wantOfferings(t, err, offeringsOf(local))
	if len(offeringsOf(err)) != 2 {
		t.Errorf("the refused launch names %v, want both capacity types of %s in %s", offeringsOf(err), parked.Type, parked.Zone)
	}

	// Once the request says they are unavailable, nothing is tried and nothing named.
	req.Unavailable = offeringsOf(local)
	_, err = remote.Create(ctx, req)
	wantCode(t, err, cloudprovider.CodeInsufficientCapacity)
	wantOfferings(t, err, nil)
}

func TestRemoteInjectedFaultsKeepTheirClass(t *testing.T) {
	c, clk, remote, _ := newRemote(t)
	id := running(t, c, clk, request("a")).ID
	c.SetFaults(Faults{
		RateLimits: map[string]RateLimit{cloudprovider.OpStop: {PerSecond: 1, Burst: 1}},
		Errors:     map[string]ErrorFault{cloudprovider.OpCreate: {Probability: 1, Code: cloudprovider.CodeQuotaExceeded}},
	})
	ctx := context.Background()
	if _, err := remote.StopInstances(ctx, []string{id}, false); err != nil {
		t.Fatalf("the first call fits in the burst: %v", err)
	}
	_, err := remote.StopInstances(ctx, []string{id}, false)
	if !errors.Is(err, cloudprovider.ErrThrottled) || !cloudprovider.IsRetryable(err) {
		t.Fatalf("second stop = %v, want a retryable Throttled", err)
	}
	if _, err := remote.Create(ctx, request("b")); !errors.Is(err, cloudprovider.ErrQuotaExceeded) || cloudprovider.IsRetryable(err) {
		t.Fatalf("create = %v, want QuotaExceeded", err)
	}
}

func TestRemoteAnswersAsTheCloudInProcess(t *testing.T) {
	c, clk, remote, _ := newRemote(t)
	ctx := context.Background()
	a := running(t, c, clk, request("a"))
	b := create(t, c, request("b"))
	other := request("c")
	other.Tags = map[string]string{v1beta1.TagCluster: "other"}
	create(t, c, other)
	ids := []string{a.ID, b.ID, "i-unknown"}

	remoteFound, err := remote.DescribeInstances(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	localFound, _ := c.DescribeInstances(ctx, ids)
	wantSame(t, "DescribeInstances", remoteFound, localFound)

	mine := map[string]string{v1beta1.TagCluster: "test"}
	remoteList, err := remote.ListInstances(ctx, mine)
	if err != nil {
		t.Fatal(err)
	}
	localList, _ := c.ListInstances(ctx, mine)
	if len(remoteList) != 2 {
		t.Errorf("listed %d instances, want 2", len(remoteList))
	}
	wantSame(t, "ListInstances", remoteList, localList)

	narrow := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{
		InstanceTypes: []string{"m5.large", "c6g.xlarge"},
		Zones:         []string{"fake-1a", "fake-1b"},
		Faults:        &v1beta1.FakeFaults{InsufficientCapacity: []v1beta1.FakeOffering{{Zone: "fake-1b"}}},
	}}
	for name, class := range map[string]*v1beta1.FakeNodeClass{"no node class": nil, "a narrow node class": narrow} {
		remoteTypes, err := remote.InstanceTypes(ctx, class)
		if err != nil {
			t.Fatal(err)
		}
		localTypes, _ := c.InstanceTypes(ctx, nodeClassObject(class))
		wantSame(t, "InstanceTypes with "+name, remoteTypes, localTypes)
	}
}

func TestRemoteHonoursTheNodeClass(t *testing.T) {
	c, clk, remote, _ := newRemote(t)
	class := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{
		InstanceTypes: []string{"c5.xlarge"},
		Zones:         []string{"fake-1b"},
		Physics:       &v1beta1.FakePhysics{LaunchDelay: v1beta1.NewDuration(time.Minute)},
	}}
	class.Name = "slow"
	req := request("a")
	req.NodeClass = class
	inst, err := remote.Create(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Type != "c5.xlarge" || inst.Zone != "fake-1b" {
		t.Fatalf("launched %s in %s, want c5.xlarge in fake-1b", inst.Type, inst.Zone)
	}
	// The class's launch delay, not the cloud's, decides when the instance runs.
	clk.Step(c.physics.LaunchDelay)
	wantState(t, c, inst.ID, cloudprovider.StatePending)
	clk.Step(time.Minute - c.physics.LaunchDelay)
	wantState(t, c, inst.ID, cloudprovider.StateRunning)

	if _, err := remote.InstanceTypes(context.Background(), &v1beta1.EC2NodeClass{}); err == nil {
		t.Error("a node class of another kind was accepted")
	}
}

func TestRemoteTransportFailuresAreRetryable(t *testing.T) {
	_, _, remote, srv := newRemote(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := remote.ListInstances(ctx, nil)
	if !errors.Is(err, context.Canceled) || !cloudprovider.IsRetryable(err) {
		t.Errorf("a cancelled call = %v, want a retryable error wrapping context.Canceled", err)
	}

	srv.Close()
	_, err = remote.StartInstances(context.Background(), []string{"i-a"})
	if !errors.Is(err, cloudprovider.ErrInternal) || !cloudprovider.IsRetryable(err) {
		t.Fatalf("a call to a stopped server = %v, want a retryable Internal error", err)
	}
}

func TestRemoteAnswerFromSomethingElseIsInternal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	remote, err := NewRemote(srv.URL+"/prefix", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.DescribeInstances(context.Background(), []string{"i-a"})
	if !errors.Is(err, cloudprovider.ErrInternal) || err.Error() != "Get: Internal: the fake cloud answered HTTP 502: bad gateway" {
		t.Fatalf("error = %v", err)
	}
}

func TestRemoteEndpointMustBeAnHTTPURL(t *testing.T) {
	for _, endpoint := range []string{"", "127.0.0.1:8090", "ftp://host", "http://", "http://host/?q=1", "://x"} {
		if _, err := NewRemote(endpoint, nil); err == nil {
			t.Errorf("NewRemote(%q) accepted a bad endpoint", endpoint)
		}
	}
	if _, err := NewRemote("http://127.0.0.1:8090/cloud", nil); err != nil {
		t.Error(err)
	}
}

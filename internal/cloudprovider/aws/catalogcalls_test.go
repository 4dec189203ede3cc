package aws

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/smithy-go/middleware"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/moto"
)

// catalogCallCounter counts the AWS operations its clients call, one per call (a page
// is a call; the retries of one call are not).
type catalogCallCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *catalogCallCounter) count(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("testCountCalls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.calls[awsmiddleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

func (c *catalogCallCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// newCountedCloud is a provider over clients whose EC2 and Pricing calls are counted.
func newCountedCloud(clients *Clients, opts Options) (*Cloud, *catalogCallCounter) {
	counter := &catalogCallCounter{calls: map[string]int{}}
	counted := *clients
	counted.EC2 = ec2.New(clients.EC2.Options(), func(o *ec2.Options) { o.APIOptions = append(o.APIOptions, counter.count) })
	counted.Pricing = pricing.New(clients.Pricing.Options(), func(o *pricing.Options) {
		o.APIOptions = append(o.APIOptions, counter.count)
		// moto does not serve the Pricing API; retrying its errors would only slow the tests.
		o.RetryMaxAttempts = 1
	})
	opts.ClusterName, opts.Region = testCluster, moto.Region
	return New(opts, &counted), counter
}

// However often and however concurrently InstanceTypes is called, the catalogue and the
// spot prices are described once; the Pricing API is not called on the request path.
func testCallsDoNotGrowWithLoad(t *testing.T, env catalogTest) {
	cloud, counter := newCountedCloud(env.clients, Options{})
	classes := []*v1beta1.EC2NodeClass{
		catalogClass("a", []string{"us-east-1a", "us-east-1b"}, "amd64"),
		catalogClass("b", []string{"us-east-1c"}, "arm64"),
		catalogClass("c", []string{"us-east-1a", "us-east-1b", "us-east-1c"}, "amd64", "arm64"),
	}
	const callers, callsEach = 100, 10
	var wg sync.WaitGroup
	for n := range callers {
		wg.Go(func() {
			for m := range callsEach {
				if _, err := cloud.InstanceTypes(context.Background(), classes[(n+m)%len(classes)]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	calls := counter.snapshot()
	t.Logf("AWS calls for %d InstanceTypes calls from %d goroutines: %v", callers*callsEach, callers, calls)
	want := map[string]int{"DescribeInstanceTypes": 1, "DescribeInstanceTypeOfferings": 1, "DescribeSpotPriceHistory": 1}
	if !maps.Equal(calls, want) {
		t.Errorf("AWS calls = %v, want %v", calls, want)
	}
}

// Start loads the catalogue once, shared with a first use, and describes it again once
// every CatalogRefresh; prices follow their own PriceRefresh.
func testCatalogRefresh(t *testing.T, env catalogTest) {
	clock := clocktesting.NewFakeClock(time.Now())
	cloud, counter := newCountedCloud(env.clients, Options{Clock: clock, CatalogRefresh: time.Hour, PriceRefresh: 3 * time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- cloud.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("Start returned %v", err)
		}
	}()
	class := catalogClass("default", []string{"us-east-1a"}, "amd64")
	if _, err := cloud.InstanceTypes(ctx, class); err != nil {
		t.Fatal(err)
	}
	catalog := cloud.catalog
	versions := func() (types, spot uint64) {
		_, types = catalog.types.current()
		_, spot = catalog.spot.current()
		return types, spot
	}
	// The Pricing API is not emulated: its loads end in failures, at the clock's time.
	pricingFailedAt := func() time.Time {
		catalog.onDemand.mu.RLock()
		defer catalog.onDemand.mu.RUnlock()
		return catalog.onDemand.failedAt
	}
	catalogWaitFor(t, "the first loads", func() bool {
		types, spot := versions()
		return types == 1 && spot == 1 && !pricingFailedAt().IsZero()
	})
	calls := counter.snapshot()
	if calls["DescribeInstanceTypes"] != 1 || calls["DescribeInstanceTypeOfferings"] != 1 || calls["DescribeSpotPriceHistory"] != 1 || calls["GetProducts"] != 1 {
		t.Fatalf("calls after Start and a first use: %v; want one of each", calls)
	}

	// An hour on, the catalogue is described again, once; the prices are not.
	clock.Step(time.Hour)
	catalogWaitFor(t, "the catalogue's refresh", func() bool { types, _ := versions(); return types == 2 })
	calls = counter.snapshot()
	if calls["DescribeInstanceTypes"] != 2 || calls["DescribeInstanceTypeOfferings"] != 2 || calls["DescribeSpotPriceHistory"] != 1 || calls["GetProducts"] != 1 {
		t.Errorf("calls an hour after Start: %v; want a second pair of catalogue describes only", calls)
	}

	// Three hours on, both prices are read again too.
	clock.Step(2 * time.Hour)
	catalogWaitFor(t, "the prices' refresh", func() bool {
		types, spot := versions()
		return types == 3 && spot == 2 && pricingFailedAt().Equal(clock.Now())
	})
	calls = counter.snapshot()
	if calls["DescribeInstanceTypes"] != 3 || calls["DescribeSpotPriceHistory"] != 2 || calls["GetProducts"] != 2 {
		t.Errorf("calls three hours after Start: %v; want 3 catalogue describes and 2 of each price", calls)
	}
	types, err := cloud.InstanceTypes(ctx, class)
	if err != nil || len(types) == 0 {
		t.Fatalf("InstanceTypes after the refreshes: %d types, %v", len(types), err)
	}
	if final := counter.snapshot(); !maps.Equal(final, calls) {
		t.Errorf("InstanceTypes after the refreshes called AWS: %v, before %v", final, calls)
	}
}

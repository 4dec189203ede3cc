package cloudprovider_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// describeCounting counts the DescribeInstances calls made to a fake cloud.
type describeCounting struct {
	*fakecloud.Cloud
	mu    sync.Mutex
	calls int
}

func (d *describeCounting) DescribeInstances(ctx context.Context, ids []string) (map[string]*cloudprovider.Instance, error) {
	d.mu.Lock()
	d.calls++
	d.mu.Unlock()
	return d.Cloud.DescribeInstances(ctx, ids)
}

func (d *describeCounting) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

// describesPerInterval asks about each of n instances once per interval, as n claims
// polling their instances do, for five intervals after the first, and returns the
// DescribeInstances calls those five intervals made.
func describesPerInterval(t *testing.T, n int) int {
	t.Helper()
	s := newSetup(t)
	var ids []string
	for i := range n {
		instance, err := s.cloud.Create(context.Background(), launchRequest(fmt.Sprintf("claim-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, instance.ID)
	}
	clk := testingclock.NewFakeClock(epoch)
	counted := &describeCounting{Cloud: s.cloud}
	// The asks come one after the other, each waiting for its answer, so the pacing of
	// describes (TestPacedBatcherStartsCallsAnIntervalApart) is off: what is counted is
	// the cache's work alone.
	provider := cloudprovider.New(counted, cloudprovider.BatchOptions{MaxItems: 500, Timeout: 10 * time.Second, DescribeMaxAge: time.Second, DescribeInterval: -1, Clock: clk}, nil)
	ask := func() {
		for _, id := range ids {
			if instance, err := provider.Get(context.Background(), id); err != nil || instance.ID != id {
				t.Fatalf("Get(%s) = %v, %v", id, instance, err)
			}
		}
		clk.Step(time.Second + time.Millisecond)
	}
	ask() // the first asks about each instance describe it: nothing knew of it before
	first := counted.count()
	for range 5 {
		ask()
	}
	return counted.count() - first
}

// Claims polling their instances make one DescribeInstances call per DescribeMaxAge
// whether there are 5 or 200 of them: a call describes every instance asked about lately.
func TestDescribesPerIntervalDoNotGrowWithInstances(t *testing.T) {
	few, many := describesPerInterval(t, 5), describesPerInterval(t, 200)
	t.Logf("describe calls over five intervals: %d for 5 instances, %d for 200", few, many)
	if few != 5 || many != 5 {
		t.Fatalf("describe calls over five intervals: %d for 5 instances, %d for 200; want one per interval", few, many)
	}
}

// An instance this provider started is described afresh at the next ask, however recent
// the last describe: the claim that started it waits for the change.
func TestDescribeAfterAnActionIsFresh(t *testing.T) {
	s := newSetup(t)
	instance, err := s.cloud.Create(context.Background(), launchRequest("claim"))
	if err != nil {
		t.Fatal(err)
	}
	clk := testingclock.NewFakeClock(epoch)
	counted := &describeCounting{Cloud: s.cloud}
	provider := cloudprovider.New(counted, cloudprovider.BatchOptions{MaxItems: 500, Timeout: 10 * time.Second, DescribeMaxAge: time.Minute, DescribeInterval: -1, Clock: clk}, nil)
	if _, err := provider.Get(context.Background(), instance.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := provider.Get(context.Background(), instance.ID); err != nil || counted.count() != 1 {
		t.Fatalf("a second ask within the age made %d calls (%v), want the one of the first", counted.count(), err)
	}
	s.cloudClock.Step(physics.DefaultPhysics().LaunchDelay)
	if err := provider.Stop(context.Background(), instance.ID, false); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Millisecond)
	got, err := provider.Get(context.Background(), instance.ID)
	if err != nil || counted.count() != 2 || got.State == cloudprovider.StateRunning {
		t.Fatalf("after the stop: %d calls, state %v (%v); want a fresh describe that sees the stop", counted.count(), got, err)
	}
}

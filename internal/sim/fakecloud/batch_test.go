package fakecloud

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// counting is the cloud with its StartInstances calls' sizes recorded.
type counting struct {
	*Cloud
	mu    sync.Mutex
	sizes []int
}

func (c *counting) StartInstances(ctx context.Context, ids []string) (map[string]error, error) {
	c.mu.Lock()
	c.sizes = append(c.sizes, len(ids))
	c.mu.Unlock()
	return c.Cloud.StartInstances(ctx, ids)
}

// TestBatchedStarts checks that the cloud works behind cloudprovider's batching: a burst
// of starts sends each instance once, however the calls fall (cloudprovider's tests
// show how they do), and every caller gets its own answer.
func TestBatchedStarts(t *testing.T) {
	c, clk := newCloud(t, Options{})
	var ids []string
	for n := range 49 {
		inst := create(t, c, request(fmt.Sprintf("claim-%d", n)))
		ids = append(ids, inst.ID)
	}
	clk.Step(c.physics.LaunchDelay)
	if errs, err := c.StopInstances(context.Background(), ids, false); err != nil || len(errs) != 0 {
		t.Fatalf("stopping: %v %v", errs, err)
	}
	clk.Step(c.physics.StopDelay)
	const unknown = "i-0000000000000dead"
	ids = append(ids, unknown)

	recorded := &counting{Cloud: c}
	provider := cloudprovider.New(recorded, cloudprovider.DefaultBatchOptions, nil)
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for n, id := range ids {
		wg.Go(func() {
			<-ready
			errs[n] = provider.Start(context.Background(), id)
		})
	}
	close(ready)
	wg.Wait()

	sent := 0
	for _, size := range recorded.sizes {
		sent += size
	}
	t.Logf("50 concurrent starts made %d StartInstances call(s) of %v instances", len(recorded.sizes), recorded.sizes)
	if sent != len(ids) || c.Calls()[cloudprovider.OpStart] != len(recorded.sizes) {
		t.Errorf("the calls carried %d instances (%v), want each of the %d once", sent, recorded.sizes, len(ids))
	}
	for n, id := range ids {
		if id == unknown {
			wantCode(t, errs[n], cloudprovider.CodeNotFound)
			continue
		}
		if errs[n] != nil {
			t.Errorf("start of %s: %v", id, errs[n])
		}
		wantState(t, c, id, cloudprovider.StatePending)
	}
}

package fake

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// TestBatchedStarts checks that the cloud works behind cloudprovider's batching: a burst
// of starts is one or two StartInstances calls, and every caller gets its own answer.
func TestBatchedStarts(t *testing.T) {
	c, clk := newCloud(t, Options{})
	var ids []string
	for n := range 49 {
		inst := create(t, c, request(fmt.Sprintf("claim-%d", n)))
		ids = append(ids, inst.ID)
	}
	clk.Step(c.physics.LaunchDelay)
	if errs, err := c.StopInstances(context.Background(), ids); err != nil || len(errs) != 0 {
		t.Fatalf("stopping: %v %v", errs, err)
	}
	clk.Step(c.physics.StopDelay)
	const unknown = "i-0000000000000dead"
	ids = append(ids, unknown)

	provider := cloudprovider.New(c, cloudprovider.DefaultBatchWindow, nil)
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

	calls := c.Calls()[cloudprovider.OpStart]
	t.Logf("50 concurrent starts made %d StartInstances call(s)", calls)
	if calls < 1 || calls > 2 {
		t.Errorf("50 starts made %d StartInstances calls, want 1 or 2", calls)
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

package provisioning

import (
	"context"
	"testing"
	"time"
)

func TestBatchClosesAfterTheIdleGap(t *testing.T) {
	b := newBatcher(20*time.Millisecond, time.Hour)
	b.trigger()
	b.trigger()
	// With max an hour away, returning at all shows the idle gap closed the batch.
	if !b.wait(context.Background()) {
		t.Fatal("the batch did not close")
	}
}

func TestBatchClosesAtItsMaximumUnderSteadyTriggers(t *testing.T) {
	b := newBatcher(time.Hour, 30*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		ticker := time.NewTicker(time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				b.trigger()
			}
		}
	}()
	// With the idle gap an hour, returning shows the maximum closed the batch.
	if !b.wait(ctx) {
		t.Fatal("the batch did not close")
	}
}

func TestBatchWaitEndsWithItsContext(t *testing.T) {
	b := newBatcher(time.Hour, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b.wait(ctx) {
		t.Fatal("wait reported a batch after its context ended")
	}
}

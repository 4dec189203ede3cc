package provisioning

import (
	"context"
	"testing"
	"time"
)

func TestWindowClosesAfterTheIdleGap(t *testing.T) {
	w := newWindow(20*time.Millisecond, time.Hour)
	w.trigger()
	w.trigger()
	// With max an hour away, returning at all shows the idle gap closed the batch.
	if !w.wait(context.Background()) {
		t.Fatal("the window did not close")
	}
}

func TestWindowClosesAtItsMaximumUnderSteadyTriggers(t *testing.T) {
	w := newWindow(time.Hour, 30*time.Millisecond)
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
				w.trigger()
			}
		}
	}()
	// With the idle gap an hour, returning shows the maximum closed the batch.
	if !w.wait(ctx) {
		t.Fatal("the window did not close")
	}
}

func TestWindowWaitEndsWithItsContext(t *testing.T) {
	w := newWindow(time.Hour, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if w.wait(ctx) {
		t.Fatal("wait reported a batch after its context ended")
	}
}

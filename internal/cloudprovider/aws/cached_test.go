package aws

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// Concurrent first uses share one load, and all of them get its value.
func TestCachedFirstUsesShareOneLoad(t *testing.T) {
	var loads atomic.Int32
	release := make(chan struct{})
	c := newCached("test", clocktesting.NewFakeClock(time.Now()), func(context.Context) (string, error) {
		loads.Add(1)
		<-release
		return "value", nil
	})
	const callers = 50
	var wg sync.WaitGroup
	results := make(chan string, callers)
	for range callers {
		wg.Go(func() {
			v, version, err := c.get(context.Background())
			if err != nil || version != 1 {
				t.Errorf("get = %q, version %d, %v", v, version, err)
			}
			results <- v
		})
	}
	// Callers that come while the load runs join it; any that come after get its value.
	catalogWaitFor(t, "the load to start", func() bool { return loads.Load() == 1 })
	close(release)
	wg.Wait()
	close(results)
	for v := range results {
		if v != "value" {
			t.Errorf("a caller got %q", v)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("%d loads for %d concurrent first uses, want 1", n, callers)
	}
}

// A caller that gives up leaves the load running for the others.
func TestCachedCallerGivingUpDoesNotCancelTheLoad(t *testing.T) {
	release := make(chan struct{})
	c := newCached("test", clocktesting.NewFakeClock(time.Now()), func(ctx context.Context) (int, error) {
		select {
		case <-release:
			return 7, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error)
	go func() { _, _, err := c.get(ctx); gaveUp <- err }()
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled caller got %v, want context.Canceled", err)
	}
	close(release)
	v, version, err := c.get(context.Background())
	if err != nil || v != 7 || version != 1 {
		t.Errorf("get after the load = %d, version %d, %v; want the load's 7, version 1", v, version, err)
	}
}

// A failed refresh keeps the last value; a failed first load is not tried again for
// cacheRetryAfterFailure, however many callers ask.
func TestCachedFailures(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	var loads atomic.Int32
	fail := errors.New("outage")
	failing := true
	c := newCached("test", clock, func(context.Context) (int, error) {
		loads.Add(1)
		if failing {
			return 0, fail
		}
		return int(loads.Load()), nil
	})
	ctx := context.Background()
	for range 10 {
		if _, _, err := c.get(ctx); !errors.Is(err, fail) {
			t.Fatalf("get during the outage = %v, want it", err)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads for 10 calls within %s of a failure, want 1", n, cacheRetryAfterFailure)
	}
	clock.Step(cacheRetryAfterFailure)
	failing = false
	v, version, err := c.get(ctx)
	if err != nil || v != 2 || version != 1 {
		t.Fatalf("get after the outage = %d, version %d, %v; want the second load's 2, version 1", v, version, err)
	}
	failing = true
	if err := c.refresh(ctx); !errors.Is(err, fail) {
		t.Fatalf("refresh = %v, want the failure", err)
	}
	if v, version, err := c.get(ctx); err != nil || v != 2 || version != 1 {
		t.Errorf("get after a failed refresh = %d, version %d, %v; want the last value 2, version 1", v, version, err)
	}
}

// catalogWaitFor polls cond until it holds, failing the test after a minute: moto takes
// seconds to describe its instance types on a busy machine.
func catalogWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

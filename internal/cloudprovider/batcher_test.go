package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// recorder is an exec function that remembers every batch it was given.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	fail    map[string]error
	whole   error
}

func (r *recorder) exec(_ context.Context, keys []string) map[string]result[string] {
	r.mu.Lock()
	r.batches = append(r.batches, append([]string(nil), keys...))
	r.mu.Unlock()
	out := map[string]result[string]{}
	for _, k := range keys {
		switch {
		case r.whole != nil:
			out[k] = result[string]{err: r.whole}
		case r.fail[k] != nil:
			out[k] = result[string]{err: r.fail[k]}
		default:
			out[k] = result[string]{value: "done:" + k}
		}
	}
	return out
}

func (r *recorder) batchCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.batches)
}

// callConcurrently calls do for every key at once and returns the results by key.
func callConcurrently(b *batcher[string, string], keys []string) (map[string]string, map[string]error) {
	var mu sync.Mutex
	values, errs := map[string]string{}, map[string]error{}
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			v, err := b.do(context.Background(), k)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[k] = err
			} else {
				values[k] = v
			}
		})
	}
	wg.Wait()
	return values, errs
}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("i-%03d", i)
	}
	return out
}

func TestBatcherJoinsConcurrentCallsIntoOneCall(t *testing.T) {
	r := &recorder{}
	// A long idle gap makes the test independent of goroutine start-up jitter.
	b := newBatcher(BatchWindow{Idle: 200 * time.Millisecond, Max: 2 * time.Second, MaxItems: 1000, Timeout: time.Second}, r.exec)
	values, errs := callConcurrently(b, keys(100))
	if len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	if got := r.batchCount(); got != 1 {
		t.Fatalf("100 concurrent calls made %d cloud calls, want 1", got)
	}
	for _, k := range keys(100) {
		if values[k] != "done:"+k {
			t.Errorf("caller %s got %q, want its own result", k, values[k])
		}
	}
}

func TestBatcherSendsADuplicateKeyOnce(t *testing.T) {
	r := &recorder{}
	b := newBatcher(BatchWindow{Idle: 200 * time.Millisecond, Max: 2 * time.Second, MaxItems: 1000, Timeout: time.Second}, r.exec)
	values, errs := callConcurrently(b, []string{"i-1", "i-1", "i-1", "i-2"})
	if len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	if len(r.batches) != 1 || len(r.batches[0]) != 2 {
		t.Fatalf("batches = %v, want one batch of the two distinct keys", r.batches)
	}
	if values["i-1"] != "done:i-1" {
		t.Errorf("duplicate callers got %q", values["i-1"])
	}
}

func TestBatcherSplitsAtMaxItems(t *testing.T) {
	r := &recorder{}
	b := newBatcher(BatchWindow{Idle: 200 * time.Millisecond, Max: 2 * time.Second, MaxItems: 10, Timeout: time.Second}, r.exec)
	_, errs := callConcurrently(b, keys(35))
	if len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	for _, batch := range r.batches {
		if len(batch) > 10 {
			t.Errorf("a batch carried %d items, more than MaxItems 10", len(batch))
		}
	}
	if got := r.batchCount(); got < 4 {
		t.Errorf("35 items with MaxItems 10 made %d calls, want at least 4", got)
	}
}

func TestBatcherRoutesPerItemAndWholeCallErrors(t *testing.T) {
	window := BatchWindow{Idle: 100 * time.Millisecond, Max: time.Second, MaxItems: 100, Timeout: time.Second}
	notFound := NewError(CodeNotFound, OpStart, "i-001", "gone")
	r := &recorder{fail: map[string]error{"i-001": notFound}}
	values, errs := callConcurrently(newBatcher(window, r.exec), keys(3))
	if !errors.Is(errs["i-001"], ErrNotFound) {
		t.Errorf("i-001 got %v, want its NotFound error", errs["i-001"])
	}
	if values["i-000"] == "" || values["i-002"] == "" {
		t.Errorf("the other items must succeed, got values %v errors %v", values, errs)
	}

	throttled := NewError(CodeThrottled, OpStart, "", "slow down")
	r = &recorder{whole: throttled}
	_, errs = callConcurrently(newBatcher(window, r.exec), keys(3))
	for _, k := range keys(3) {
		if !errors.Is(errs[k], ErrThrottled) {
			t.Errorf("%s got %v, want the whole-call Throttled error", k, errs[k])
		}
	}
}

func TestBatcherCallerCancellationLeavesOthersServed(t *testing.T) {
	r := &recorder{}
	b := newBatcher(BatchWindow{Idle: 100 * time.Millisecond, Max: time.Second, MaxItems: 100, Timeout: time.Second}, r.exec)
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan error, 1)
	go func() {
		_, err := b.do(ctx, "i-cancelled")
		cancelled <- err
	}()
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v, want context.Canceled", err)
	}
	v, err := b.do(context.Background(), "i-other")
	if err != nil || v != "done:i-other" {
		t.Fatalf("a later caller got %q, %v", v, err)
	}
}

func TestBatcherLoneCallWaitsOnlyTheIdleGap(t *testing.T) {
	r := &recorder{}
	b := newBatcher(BatchWindow{Idle: time.Millisecond, Max: time.Hour, MaxItems: 100, Timeout: time.Second}, r.exec)
	// With Max at an hour, returning at all shows that the idle gap closed the batch.
	if v, err := b.do(context.Background(), "i-1"); err != nil || v != "done:i-1" {
		t.Fatalf("got %q, %v", v, err)
	}
}

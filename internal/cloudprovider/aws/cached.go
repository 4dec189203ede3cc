package aws

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// cacheLoadTimeout bounds one load of a cached value; a paginated describe of the whole
// catalogue takes seconds.
const cacheLoadTimeout = 2 * time.Minute

// cacheRetryAfterFailure is how long a value that has never loaded is not asked for
// again after a failed load: callers in that time get the failure, so that an outage
// does not turn every call of InstanceTypes into a describe.
const cacheRetryAfterFailure = 15 * time.Second

// cached is a value read from AWS once and replaced by refreshes: concurrent callers
// share one load, a failed refresh keeps the last value, and the value's version tells
// callers when it changed.
type cached[T any] struct {
	// what names the value in logs and errors.
	what  string
	load  func(ctx context.Context) (T, error)
	clock clock.PassiveClock

	group singleflight.Group

	mu sync.RWMutex
	// value is the last value loaded; version counts the loads, 0 before the first.
	value   T
	version uint64
	// lastErr is the last load's error and failedAt its time; zero after a success.
	lastErr  error
	failedAt time.Time
}

func newCached[T any](what string, clk clock.PassiveClock, load func(ctx context.Context) (T, error)) *cached[T] {
	return &cached[T]{what: what, load: load, clock: clk}
}

// current returns the value and its version without loading; version 0 means none.
func (c *cached[T]) current() (T, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.value, c.version
}

// get returns the value, loading it on first use; it fails only while no load has
// succeeded yet.
func (c *cached[T]) get(ctx context.Context) (T, uint64, error) {
	c.mu.RLock()
	value, version, lastErr, failedAt := c.value, c.version, c.lastErr, c.failedAt
	c.mu.RUnlock()
	if version > 0 {
		return value, version, nil
	}
	if lastErr != nil && c.clock.Since(failedAt) < cacheRetryAfterFailure {
		return value, 0, lastErr
	}
	if err := c.refresh(ctx); err != nil {
		return value, 0, err
	}
	value, version = c.current()
	return value, version, nil
}

// refresh loads the value anew, or waits for the load under way. The load carries on
// when ctx ends, for the other callers waiting on it.
func (c *cached[T]) refresh(ctx context.Context) error {
	done := c.group.DoChan("", func() (any, error) {
		loadCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheLoadTimeout)
		defer cancel()
		value, err := c.load(loadCtx)
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil {
			err = fmt.Errorf("%s: %w", c.what, err)
			c.lastErr, c.failedAt = err, c.clock.Now()
			return nil, err
		}
		c.value, c.lastErr, c.failedAt = value, nil, time.Time{}
		c.version++
		return nil, nil
	})
	select {
	case <-ctx.Done():
		return ctx.Err()
	case result := <-done:
		return result.Err
	}
}

// keepFresh loads the value, unless a first use did, then refreshes it every interval
// until ctx ends. A failed refresh is logged and the last value kept.
func (c *cached[T]) keepFresh(ctx context.Context, clk clock.Clock, every time.Duration) {
	// The next refresh is timed from the start of this one, so that the timer is set
	// before the load is seen to end.
	next := clk.After(every)
	if _, _, err := c.get(ctx); err != nil && ctx.Err() == nil {
		log.FromContext(ctx).Error(err, "Loading failed; trying again later", "every", every)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
		next = clk.After(every)
		if err := c.refresh(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "Refreshing failed; keeping the last answer", "every", every)
		}
	}
}

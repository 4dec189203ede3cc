package cloudprovider

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// BatchOptions bound the calls a batcher makes.
type BatchOptions struct {
	// MaxItems is the most distinct items one call carries; the items beyond it wait
	// for the calls after.
	MaxItems int
	// Timeout bounds each call.
	Timeout time.Duration
	// DescribeMaxAge is how old an answer about an instance may be: within it, what the
	// last describe said is answered without a call (see describeCache). Negative
	// describes at every ask; zero is DefaultBatchOptions'.
	DescribeMaxAge time.Duration
	// DescribeInterval is the least time between the starts of two describe calls: asks
	// that miss the cache meanwhile wait and go together in the next call, so that the
	// describes per minute stay bounded however many instances are launched, started
	// and stopped at once. Negative sends each call as soon as the one before returns;
	// zero is DefaultBatchOptions'.
	DescribeInterval time.Duration
	// Clock tells the age of describes, and paces them when it can wait (a clock.Clock);
	// nil is the real clock.
	Clock clock.PassiveClock
}

// DefaultBatchOptions carry at most 500 instances a call, give a call 30 s, and answer
// about an instance from a describe at most 1 s old, so that describes come at most once
// a second however many claims wait on their instances.
//
// EC2 takes up to 1000 instance IDs in a StartInstances, StopInstances or
// TerminateInstances call and recommends smaller batches. One bad ID fails the whole
// call, which the EC2 provider answers by splitting it, so a smaller batch costs less to
// split; and 500 still starts a 1000-node burst in two calls.
//
// The SDK's retryer retries a throttled or failed call inside this time; a call still
// failing after 30 s fails its items, whose callers retry with their own backoff, rather
// than holding back the calls queued behind it.
//
// Describe calls start at least 1 s apart: an instance just started or stopped is not
// answered from the cache, and without the interval each such ask could make a call of
// its own, as many a minute as the instances being acted on. An ask waits at most the
// interval, under the claims' 2 s poll.
var DefaultBatchOptions = BatchOptions{MaxItems: 500, Timeout: 30 * time.Second, DescribeMaxAge: time.Second, DescribeInterval: time.Second}

// result is what one item of a batch gets back.
type result[V any] struct {
	value V
	err   error
}

// batcher joins calls of one kind by group commit, as a database joins the commits that
// arrive while it writes its log. While no call is in flight an item goes at once, in a
// call of its own: nothing waits for company. While one is in flight, items queue, and
// when it returns they all go in the next call, up to MaxItems (the rest in the calls
// after). A burst of items arriving one by one thus makes a call, then one call per call
// time, however many items it holds: the slower the cloud answers, the more each call
// carries.
//
// One call is in flight at a time. A second would save its items the wait for the call
// in flight, at most one call time, but it is the calls, not the items, that a cloud
// throttles; and the kinds are separate batchers, so starts never wait for stops.
//
// A key asked for again while it waits is sent once, and every caller gets the same
// answer. A key asked for while it is in a call in flight goes in the next call: that
// call was sent before the ask, so its answer may predate it.
//
// A batcher with an interval starts its calls at least that far apart: an item asked
// sooner after the last call's start waits, with the items asked meanwhile, until the
// interval has passed.
type batcher[K comparable, V any] struct {
	opts BatchOptions
	exec func(ctx context.Context, keys []K) map[K]result[V]
	// interval is the least time between two calls' starts, on clk; zero for none.
	interval time.Duration
	clk      clock.Clock

	mu       sync.Mutex
	inFlight bool
	// started is when the last call started.
	started time.Time
	// queue holds the batches waiting for the call in flight, oldest first; only the
	// last may have room.
	queue []*batch[K, V]
	// waiting finds the queued batch of a key.
	waiting map[K]*batch[K, V]
}

// batch is the items of one call.
type batch[K comparable, V any] struct {
	ctx     context.Context
	keys    []K
	done    chan struct{} // closed when results is filled
	results map[K]result[V]
}

func newBatcher[K comparable, V any](opts BatchOptions, exec func(ctx context.Context, keys []K) map[K]result[V]) *batcher[K, V] {
	if opts.MaxItems <= 0 {
		opts.MaxItems = DefaultBatchOptions.MaxItems
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultBatchOptions.Timeout
	}
	return &batcher[K, V]{opts: opts, exec: exec, waiting: map[K]*batch[K, V]{}}
}

// newPacedBatcher is a batcher whose calls start at least interval apart on the clock of
// opts if it can wait, else the real clock.
func newPacedBatcher[K comparable, V any](opts BatchOptions, interval time.Duration, exec func(ctx context.Context, keys []K) map[K]result[V]) *batcher[K, V] {
	b := newBatcher(opts, exec)
	b.interval = max(interval, 0)
	b.clk = clock.RealClock{}
	if clk, ok := opts.Clock.(clock.Clock); ok {
		b.clk = clk
	}
	return b
}

// newBatch opens a batch whose call runs on a copy of ctx: the call outlives the
// cancellation of the caller who opened it, as other callers wait on it, but keeps its
// values, such as the logger.
func newBatch[K comparable, V any](ctx context.Context) *batch[K, V] {
	return &batch[K, V]{ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
}

// do sends key in the next call and waits for its result, or for ctx to end.
func (b *batcher[K, V]) do(ctx context.Context, key K) (V, error) {
	joined := b.add(ctx, key)
	select {
	case <-joined.done:
		r := joined.results[key]
		return r.value, r.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// add puts key in a call: at once when none is in flight, else in the queue.
func (b *batcher[K, V]) add(ctx context.Context, key K) *batch[K, V] {
	b.mu.Lock()
	defer b.mu.Unlock()
	if queued, ok := b.waiting[key]; ok {
		return queued
	}
	if !b.inFlight {
		b.inFlight = true
		if b.wait() <= 0 {
			alone := newBatch[K, V](ctx)
			alone.keys = []K{key}
			go b.run(alone)
			return alone
		}
		// Too soon after the last call: the item waits in the queue, and those asked
		// meanwhile join it.
		defer func() { go b.run(nil) }()
	}
	n := len(b.queue)
	if n == 0 || len(b.queue[n-1].keys) >= b.opts.MaxItems {
		b.queue = append(b.queue, newBatch[K, V](ctx))
		n++
	}
	last := b.queue[n-1]
	last.keys = append(last.keys, key)
	b.waiting[key] = last
	return last
}

// run makes the call of current, if any, then of each batch queued meanwhile, one after
// the other and each no sooner than the interval allows, until none is left.
func (b *batcher[K, V]) run(current *batch[K, V]) {
	for {
		if current == nil {
			b.pace()
			if current = b.next(); current == nil {
				return
			}
		}
		b.mu.Lock()
		b.started = b.now()
		b.mu.Unlock()
		ctx, cancel := context.WithTimeout(current.ctx, b.opts.Timeout)
		current.results = b.exec(ctx, current.keys)
		cancel()
		close(current.done)
		current = nil
	}
}

// wait is how long the next call must wait for the interval; callers hold mu.
func (b *batcher[K, V]) wait() time.Duration {
	if b.interval <= 0 || b.started.IsZero() {
		return 0
	}
	return b.interval - b.clk.Since(b.started)
}

// pace waits until the interval since the last call's start has passed.
func (b *batcher[K, V]) pace() {
	b.mu.Lock()
	wait := b.wait()
	b.mu.Unlock()
	if wait > 0 {
		<-b.clk.After(wait)
	}
}

func (b *batcher[K, V]) now() time.Time {
	if b.clk == nil {
		return time.Time{}
	}
	return b.clk.Now()
}

// next takes the oldest queued batch, or records that no call is in flight.
func (b *batcher[K, V]) next() *batch[K, V] {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.inFlight = false
		return nil
	}
	next := b.queue[0]
	b.queue[0] = nil
	b.queue = b.queue[1:]
	for _, key := range next.keys {
		delete(b.waiting, key)
	}
	return next
}

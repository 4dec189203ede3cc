package cloudprovider

import (
	"context"
	"sync"
	"time"
)

// BatchWindow says how long a batch stays open for more items.
type BatchWindow struct {
	// Idle closes the batch when no item arrived for this long.
	Idle time.Duration
	// Max closes the batch this long after its first item, however busy.
	Max time.Duration
	// MaxItems closes the batch when it holds this many distinct items.
	MaxItems int
	// Timeout bounds the cloud call a batch makes.
	Timeout time.Duration
}

// DefaultBatchWindow waits 25 ms after the last call for more, and never more than
// 250 ms after the first: a burst of starts written one claim at a time collapses into
// one or two calls, while a lone start waits 25 ms, under 0.2% of the 13 s an instance
// takes to start. Karpenter's launch batching waits 35 ms idle and 1 s at most.
var DefaultBatchWindow = BatchWindow{Idle: 25 * time.Millisecond, Max: 250 * time.Millisecond, MaxItems: 500, Timeout: time.Minute}

// result is what one item of a batch gets back.
type result[V any] struct {
	value V
	err   error
}

// batcher joins concurrent calls for distinct keys into one call of exec. A key asked
// for twice in one batch is sent once and both callers get the same answer.
type batcher[K comparable, V any] struct {
	window BatchWindow
	exec   func(ctx context.Context, keys []K) map[K]result[V]

	mu      sync.Mutex
	pending *batch[K, V]
}

type batch[K comparable, V any] struct {
	ctx     context.Context
	keys    []K
	seen    map[K]struct{}
	added   chan struct{} // one signal per added item, to restart the idle timer
	full    chan struct{} // closed when MaxItems is reached
	done    chan struct{} // closed when results is filled
	results map[K]result[V]
}

func newBatcher[K comparable, V any](window BatchWindow, exec func(ctx context.Context, keys []K) map[K]result[V]) *batcher[K, V] {
	return &batcher[K, V]{window: window, exec: exec}
}

// do adds key to the open batch (opening one if needed) and waits for its result.
func (b *batcher[K, V]) do(ctx context.Context, key K) (V, error) {
	current := b.add(ctx, key)
	select {
	case <-current.done:
		r := current.results[key]
		return r.value, r.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

func (b *batcher[K, V]) add(ctx context.Context, key K) *batch[K, V] {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == nil {
		b.pending = &batch[K, V]{
			// The call outlives the first caller's cancellation (other callers wait on
			// it) but keeps its values, such as the logger.
			ctx:   context.WithoutCancel(ctx),
			seen:  map[K]struct{}{},
			added: make(chan struct{}, 1),
			full:  make(chan struct{}),
			done:  make(chan struct{}),
		}
		go b.run(b.pending)
	}
	current := b.pending
	if _, dup := current.seen[key]; !dup {
		current.seen[key] = struct{}{}
		current.keys = append(current.keys, key)
		if len(current.keys) == b.window.MaxItems {
			close(current.full)
			b.pending = nil
		}
	}
	select {
	case current.added <- struct{}{}:
	default:
	}
	return current
}

// run waits for the batch to close, then makes the call.
func (b *batcher[K, V]) run(current *batch[K, V]) {
	maxTimer := time.NewTimer(b.window.Max)
	defer maxTimer.Stop()
	idleTimer := time.NewTimer(b.window.Idle)
	defer idleTimer.Stop()
wait:
	for {
		select {
		case <-current.added:
			idleTimer.Reset(b.window.Idle)
		case <-idleTimer.C:
			break wait
		case <-maxTimer.C:
			break wait
		case <-current.full:
			break wait
		}
	}
	b.mu.Lock()
	if b.pending == current {
		b.pending = nil
	}
	b.mu.Unlock()

	ctx, cancel := context.WithTimeout(current.ctx, b.window.Timeout)
	defer cancel()
	current.results = b.exec(ctx, current.keys)
	close(current.done)
}

package provisioning

import (
	"context"
	"time"
)

// batcher gathers triggers into batches. A batch opens on the first trigger and closes
// once no trigger came for idle, or max after it opened, whichever is first: a burst of
// pods marked unschedulable one by one is decided at once.
type batcher struct {
	idle, max time.Duration
	triggers  chan struct{}
}

func newBatcher(idle, max time.Duration) *batcher {
	return &batcher{idle: idle, max: max, triggers: make(chan struct{}, 1)}
}

// trigger opens a batch, or extends the open one. It never blocks.
func (b *batcher) trigger() {
	select {
	case b.triggers <- struct{}{}:
	default:
	}
}

// wait blocks until a batch closes, and reports false when ctx ends first.
func (b *batcher) wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-b.triggers:
	}
	maxTimer := time.NewTimer(b.max)
	defer maxTimer.Stop()
	idleTimer := time.NewTimer(b.idle)
	defer idleTimer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-b.triggers:
			idleTimer.Reset(b.idle)
		case <-idleTimer.C:
			return true
		case <-maxTimer.C:
			return true
		}
	}
}

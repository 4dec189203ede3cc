package provisioning

import (
	"context"
	"time"
)

// window gathers triggers into batches. A batch opens on the first trigger and closes
// once no trigger came for idle, or max after it opened, whichever is first: a burst of
// pods marked unschedulable one by one is decided at once.
type window struct {
	idle, max time.Duration
	triggers  chan struct{}
}

func newWindow(idle, max time.Duration) *window {
	return &window{idle: idle, max: max, triggers: make(chan struct{}, 1)}
}

// trigger opens a batch, or extends the open one. It never blocks.
func (w *window) trigger() {
	select {
	case w.triggers <- struct{}{}:
	default:
	}
}

// wait blocks until a batch closes, and reports false when ctx ends first.
func (w *window) wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-w.triggers:
	}
	maxTimer := time.NewTimer(w.max)
	defer maxTimer.Stop()
	idleTimer := time.NewTimer(w.idle)
	defer idleTimer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-w.triggers:
			idleTimer.Reset(w.idle)
		case <-idleTimer.C:
			return true
		case <-maxTimer.C:
			return true
		}
	}
}

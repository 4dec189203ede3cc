package interruption

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// scriptedQueue answers each Receive from its script, then with nothing at once (a queue
// that does not long-poll), and records the time of every Receive and what was deleted.
type scriptedQueue struct {
	mu       sync.Mutex
	script   []func() ([]cloudprovider.QueueMessage, error)
	receives []time.Time
	deleted  []string
}

func (q *scriptedQueue) Receive(ctx context.Context) ([]cloudprovider.QueueMessage, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.receives = append(q.receives, time.Now())
	if len(q.script) == 0 {
		return nil, nil
	}
	next := q.script[0]
	q.script = q.script[1:]
	return next()
}

func (q *scriptedQueue) Delete(_ context.Context, msgs []cloudprovider.QueueMessage) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		q.deleted = append(q.deleted, m.ID)
	}
	return nil
}

func (q *scriptedQueue) snapshot() (receives []time.Time, deleted []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]time.Time(nil), q.receives...), append([]string(nil), q.deleted...)
}

// run starts the controller on q and returns a stop that waits for it to end.
func run(t *testing.T, q cloudprovider.NoticeQueue, opts Options) (stop func()) {
	t.Helper()
	c := &Controller{Queue: q, Clock: clock.RealClock{}, Options: opts}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Start returned %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("the controller did not stop with its context")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// Failing receives are retried after a wait that doubles each time, and a queue that
// heals is read again.
func TestFailingReceivesBackOff(t *testing.T) {
	failing := func() ([]cloudprovider.QueueMessage, error) { return nil, errors.New("throttled") }
	q := &scriptedQueue{script: []func() ([]cloudprovider.QueueMessage, error){failing, failing, failing, failing,
		func() ([]cloudprovider.QueueMessage, error) {
			return []cloudprovider.QueueMessage{{ID: "after-the-errors", Handle: "h", Body: []byte("not json")}}, nil
		}}}
	base := 50 * time.Millisecond
	run(t, q, Options{ReceiveBackoffBase: base, ReceiveBackoffMax: 10 * time.Second})
	waitFor(t, "the message after the errors is deleted", func() bool {
		_, deleted := q.snapshot()
		return len(deleted) == 1
	})
	receives, _ := q.snapshot()
	// After the n-th failure in a row the wait is base·2^(n-1), jitter adding only.
	for n := 1; n < 5; n++ {
		want := base << (n - 1)
		if gap := receives[n].Sub(receives[n-1]); gap < want {
			t.Errorf("receive %d came %v after a failure, want at least %v", n+1, gap, want)
		}
	}
}

// A queue that answers at once with nothing is asked no more often than
// MinReceiveInterval: the loop never spins.
func TestEmptyReceivesAreSpaced(t *testing.T) {
	q := &scriptedQueue{}
	interval := 100 * time.Millisecond
	stop := run(t, q, Options{MinReceiveInterval: interval})
	waitFor(t, "five receives", func() bool {
		receives, _ := q.snapshot()
		return len(receives) >= 5
	})
	stop()
	receives, _ := q.snapshot()
	if span, want := receives[len(receives)-1].Sub(receives[0]), time.Duration(len(receives)-1)*interval; span < want {
		t.Fatalf("%d receives in %v, want at least %v between each", len(receives), span, interval)
	}
}

// Messages that cannot be read, or that Stratos does not read, are deleted at once: they
// would come back for ever.
func TestUnreadableMessagesAreDeleted(t *testing.T) {
	q := &scriptedQueue{script: []func() ([]cloudprovider.QueueMessage, error){func() ([]cloudprovider.QueueMessage, error) {
		return []cloudprovider.QueueMessage{
			{ID: "malformed", Handle: "h1", Body: []byte(`{"truncated":`)},
			{ID: "foreign", Handle: "h2", Body: []byte(`{"id":"e","source":"aws.autoscaling","detail-type":"EC2 Instance Launch Successful","time":"2026-11-27T06:00:00Z","detail":{}}`)},
		}, nil
	}}}
	run(t, q, Options{})
	waitFor(t, "both messages are deleted", func() bool {
		_, deleted := q.snapshot()
		return len(deleted) == 2
	})
}

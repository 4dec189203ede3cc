package fakecloud

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// NoticeOptions configure the cloud's notice queue, which stands for the SQS queue that
// EventBridge rules feed on AWS.
type NoticeOptions struct {
	// LongPoll is how long Receive waits for a message when none is there, divided by
	// the time scale as the physics are. Defaults to 20s, SQS's longest wait.
	LongPoll time.Duration
	// VisibilityTimeout is how long a received message stays hidden before it comes again
	// unless deleted, divided by the time scale. Defaults to 30s, SQS's default.
	VisibilityTimeout time.Duration
	// StateChanges says when every instance state transition posts an "EC2 Instance
	// State-change Notification". Defaults to StateChangesOnceRead.
	StateChanges StateChangeNotices
}

// StateChangeNotices says when the cloud posts state-change notices.
type StateChangeNotices string

const (
	// StateChangesOnceRead posts them from the queue's first Receive on: a cloud whose
	// queue nobody reads, as in most tests, does not pile up a message per transition,
	// as no EventBridge rule would feed a queue nobody set up. The default.
	StateChangesOnceRead StateChangeNotices = ""
	// StateChangesAlways posts them from the start.
	StateChangesAlways StateChangeNotices = "Always"
	// StateChangesNever never posts them.
	StateChangesNever StateChangeNotices = "Never"
)

const (
	defaultLongPoll          = 20 * time.Second
	defaultVisibilityTimeout = 30 * time.Second
	// maxReceive is the most messages one Receive returns, as SQS's MaxNumberOfMessages.
	maxReceive = 10
)

// noticeQueue is the fake cloud's notice queue: an in-memory SQS queue. It implements
// cloudprovider.NoticeQueue.
type noticeQueue struct {
	cloud      *Cloud
	longPoll   time.Duration
	visibility time.Duration
	// read is set by the first Receive.
	read atomic.Bool

	mu       sync.Mutex
	messages []*queuedMessage
	// posted is closed when a message is posted, to wake the receivers, and replaced.
	posted chan struct{}
	// sent numbers the messages posted, for their IDs.
	sent int
}

// queuedMessage is one message in the queue with its receipt state.
type queuedMessage struct {
	id   string
	body []byte
	// visibleAt is when the message may be received (again).
	visibleAt time.Time
	// receives counts its receipts; the handle of the latest names it.
	receives int
	handle   string
}

var _ cloudprovider.NoticeQueue = (*noticeQueue)(nil)

func newNoticeQueue(c *Cloud, opts NoticeOptions) *noticeQueue {
	scaled := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			d = def
		}
		return time.Duration(float64(d) / c.timeScale)
	}
	return &noticeQueue{
		cloud:      c,
		longPoll:   scaled(opts.LongPoll, defaultLongPoll),
		visibility: scaled(opts.VisibilityTimeout, defaultVisibilityTimeout),
		posted:     make(chan struct{}),
	}
}

// Notices is the cloud's notice queue, where it posts the EventBridge events of its
// instances: interruption warnings, rebalance recommendations, scheduled changes and
// state changes.
func (c *Cloud) Notices() cloudprovider.NoticeQueue { return c.notices }

// post appends a message to the queue and wakes the receivers.
func (q *noticeQueue) post(body []byte, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent++
	q.messages = append(q.messages, &queuedMessage{id: messageID(q.sent), body: body, visibleAt: now})
	close(q.posted)
	q.posted = make(chan struct{})
}

// Receive returns up to ten visible messages, waiting up to the long-poll time for one
// to come or to become visible again. It ends early, with ctx's error, when ctx ends.
func (q *noticeQueue) Receive(ctx context.Context) ([]cloudprovider.QueueMessage, error) {
	q.read.Store(true)
	clk := q.cloud.clock
	deadline := clk.Now().Add(q.longPoll)
	for {
		// The cloud's instances change lazily: bring them up to now, so that transitions
		// and reclaims that are due post their notices before the queue is looked at.
		nextChange := q.cloud.refresh()
		q.mu.Lock()
		now := clk.Now()
		msgs, nextVisible := q.take(now)
		posted := q.posted
		q.mu.Unlock()
		if len(msgs) > 0 {
			return msgs, nil
		}
		if !now.Before(deadline) {
			return nil, nil
		}
		wakeAt := deadline
		for _, t := range []time.Time{nextVisible, nextChange} {
			if !t.IsZero() && t.Before(wakeAt) {
				wakeAt = t
			}
		}
		timer := clk.NewTimer(max(wakeAt.Sub(now), 0))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-posted:
		case <-timer.C():
		}
		timer.Stop()
	}
}

// take returns the visible messages, up to maxReceive, each with a new receipt handle and
// hidden for the visibility timeout, and when the next hidden one shows again. The caller
// holds the lock.
func (q *noticeQueue) take(now time.Time) ([]cloudprovider.QueueMessage, time.Time) {
	var (
		msgs        []cloudprovider.QueueMessage
		nextVisible time.Time
	)
	for _, m := range q.messages {
		if m.visibleAt.After(now) {
			if nextVisible.IsZero() || m.visibleAt.Before(nextVisible) {
				nextVisible = m.visibleAt
			}
			continue
		}
		if len(msgs) == maxReceive {
			continue
		}
		m.receives++
		m.handle = fmt.Sprintf("%s#%d", m.id, m.receives)
		m.visibleAt = now.Add(q.visibility)
		msgs = append(msgs, cloudprovider.QueueMessage{ID: m.id, Handle: m.handle, Body: slices.Clone(m.body)})
	}
	return msgs, nextVisible
}

// Delete removes the messages whose latest receipt the handles name. A handle of an
// earlier receipt, or of a message deleted already, deletes nothing, as on SQS.
func (q *noticeQueue) Delete(_ context.Context, msgs []cloudprovider.QueueMessage) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, msg := range msgs {
		q.messages = slices.DeleteFunc(q.messages, func(m *queuedMessage) bool { return m.handle != "" && m.handle == msg.Handle })
	}
	return nil
}

// Len is how many messages the queue holds, received or not.
func (q *noticeQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.messages)
}

// messageID is a UUID-shaped ID, as SQS's message IDs and EventBridge's event IDs are,
// numbered rather than random so that a seeded run repeats.
func messageID(n int) string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", n)
}

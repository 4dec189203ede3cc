package cloudprovider

import "context"

// NoticeQueue is where a cloud posts its notices about instances: interruption
// warnings, rebalance recommendations, scheduled changes and state changes. On AWS it is
// an SQS queue that EventBridge rules feed; the fake cloud keeps one of its own and
// posts the same EventBridge messages to it, so that one handler reads both.
type NoticeQueue interface {
	// Receive waits for messages, up to the queue's long-poll time, and returns those
	// that came; none when the wait ends without any. A message not deleted comes again
	// once the queue's visibility timeout passes.
	Receive(ctx context.Context) ([]QueueMessage, error)
	// Delete removes handled messages from the queue; deleting one twice does nothing.
	Delete(ctx context.Context, msgs []QueueMessage) error
}

// QueueMessage is one message of a NoticeQueue.
type QueueMessage struct {
	// ID is the queue's identifier of the message.
	ID string
	// Handle is what Delete needs to remove this receipt of the message (SQS's receipt
	// handle).
	Handle string
	// Body is the message as posted: an EventBridge event, in JSON.
	Body []byte
}

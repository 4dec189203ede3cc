package aws

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Defaults of the interruption queue's receive.
const (
	// DefaultQueueWaitTime is how long a receive waits for messages: SQS's longest long
	// poll, so that an idle queue costs three requests a minute.
	DefaultQueueWaitTime = 20 * time.Second
	// DefaultQueueVisibilityTimeout hides a received message from other receives while it
	// is handled. Handling ten messages takes seconds (a few writes to the API server
	// each); a message whose handling failed comes back after this, well inside a spot
	// warning's two minutes.
	DefaultQueueVisibilityTimeout = 30 * time.Second
	// queueMaxMessages is the most messages SQS returns in one receive and takes in one
	// batch delete.
	queueMaxMessages = 10
)

// InterruptionQueue is the SQS queue that EventBridge rules fill with EC2's notices
// about instances (deploy/interruption sets them up); it is the AWS cloud's
// cloudprovider.NoticeQueue.
type InterruptionQueue struct {
	client *sqs.Client
	// url is the queue's URL, which every call names.
	url        string
	wait       time.Duration
	visibility time.Duration
}

var _ cloudprovider.NoticeQueue = (*InterruptionQueue)(nil)

// QueueOptions tune the receives of an InterruptionQueue; zero fields take the defaults.
type QueueOptions struct {
	// WaitTime is the long poll of a receive, in whole seconds up to 20 (SQS's most).
	WaitTime time.Duration
	// VisibilityTimeout hides a received message until it is deleted or this passes.
	VisibilityTimeout time.Duration
}

// queueNamePattern is SQS's rule for queue names: up to 80 letters, digits, '-' and
// '_', with .fifo at the end of a FIFO queue's.
var queueNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$|^[A-Za-z0-9_-]{1,75}\.fifo$`)

// queueRef is a queue as the operator is given it: by name, or by URL, whose path is
// /<account>/<name>.
type queueRef struct {
	name    string
	account string
	url     string
}

// CheckQueue says what is wrong with a queue given to --interruption-queue: it must be
// a queue's name or its URL (https://sqs.<region>.amazonaws.com/<account>/<name>).
func CheckQueue(queue string) error {
	_, err := parseQueue(queue)
	return err
}

func parseQueue(queue string) (queueRef, error) {
	if strings.HasPrefix(queue, "https://") || strings.HasPrefix(queue, "http://") {
		u, err := url.Parse(queue)
		if err != nil {
			return queueRef{}, fmt.Errorf("%q is not a URL: %w", queue, err)
		}
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		if u.Host == "" || len(parts) != 2 || parts[0] == "" || !queueNamePattern.MatchString(parts[1]) {
			return queueRef{}, fmt.Errorf("%q is not a queue URL such as https://sqs.us-east-1.amazonaws.com/111122223333/my-queue", queue)
		}
		return queueRef{name: parts[1], account: parts[0], url: queue}, nil
	}
	if strings.HasPrefix(queue, "arn:") {
		return queueRef{}, fmt.Errorf("%q is an ARN; give the queue's name or URL", queue)
	}
	if !queueNamePattern.MatchString(queue) {
		return queueRef{}, fmt.Errorf("%q is neither an SQS queue name (up to 80 letters, digits, '-' and '_') nor a queue URL", queue)
	}
	return queueRef{name: queue}, nil
}

// OpenInterruptionQueue finds the queue given by name or URL with one GetQueueUrl, so
// that a queue missing, in another region or out of the credentials' reach stops the
// operator at start-up with the reason, instead of every receive failing later.
func OpenInterruptionQueue(ctx context.Context, client *sqs.Client, queue string, opts QueueOptions) (*InterruptionQueue, error) {
	ref, err := parseQueue(queue)
	if err != nil {
		return nil, err
	}
	in := &sqs.GetQueueUrlInput{QueueName: aws.String(ref.name)}
	if ref.account != "" {
		in.QueueOwnerAWSAccountId = aws.String(ref.account)
	}
	out, err := client.GetQueueUrl(ctx, in)
	if err != nil {
		var missing *sqstypes.QueueDoesNotExist
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("interruption queue %q does not exist in the operator's region; create it (docs/interruptions.md#setting-up-the-queue) or fix the name: %w", queue, err)
		}
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && classifyCode(apiErr.ErrorCode()) == cloudprovider.CodeUnauthorized {
			return nil, fmt.Errorf("interruption queue %q: the controller's role may not use it; grant it deploy/iam/controller-policy-interruption.json: %w", queue, err)
		}
		return nil, fmt.Errorf("interruption queue %q: %w", queue, err)
	}
	q := &InterruptionQueue{client: client, url: ref.url, wait: opts.WaitTime, visibility: opts.VisibilityTimeout}
	if q.url == "" {
		q.url = aws.ToString(out.QueueUrl)
	}
	if q.wait <= 0 || q.wait > DefaultQueueWaitTime {
		// SQS refuses a long poll longer than 20 seconds.
		q.wait = DefaultQueueWaitTime
	}
	if q.visibility <= 0 {
		q.visibility = DefaultQueueVisibilityTimeout
	}
	return q, nil
}

// URL is the queue's URL.
func (q *InterruptionQueue) URL() string { return q.url }

// Receive long-polls the queue for up to ten messages.
func (q *InterruptionQueue) Receive(ctx context.Context) ([]cloudprovider.QueueMessage, error) {
	out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:            aws.String(q.url),
		MaxNumberOfMessages: queueMaxMessages,
		WaitTimeSeconds:     int32(q.wait / time.Second),
		VisibilityTimeout:   int32(q.visibility / time.Second),
	})
	if err != nil {
		return nil, fmt.Errorf("receiving from the interruption queue: %w", err)
	}
	msgs := make([]cloudprovider.QueueMessage, 0, len(out.Messages))
	for _, m := range out.Messages {
		msgs = append(msgs, cloudprovider.QueueMessage{
			ID:     aws.ToString(m.MessageId),
			Handle: aws.ToString(m.ReceiptHandle),
			Body:   []byte(aws.ToString(m.Body)),
		})
	}
	return msgs, nil
}

// Delete removes the messages in batches of ten. A receipt handle SQS calls invalid is
// of a message already deleted (or received again since, which its next handling
// deletes): it is not an error. Any other entry that failed is, naming its message.
func (q *InterruptionQueue) Delete(ctx context.Context, msgs []cloudprovider.QueueMessage) error {
	// SQS refuses a batch that holds one receipt handle twice.
	seen := map[string]bool{}
	var unique []cloudprovider.QueueMessage
	for _, m := range msgs {
		if !seen[m.Handle] {
			seen[m.Handle] = true
			unique = append(unique, m)
		}
	}
	var errs []error
	for start := 0; start < len(unique); start += queueMaxMessages {
		batch := unique[start:min(start+queueMaxMessages, len(unique))]
		entries := make([]sqstypes.DeleteMessageBatchRequestEntry, len(batch))
		for i, m := range batch {
			entries[i] = sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(m.Handle)}
		}
		out, err := q.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
		if err != nil {
			errs = append(errs, fmt.Errorf("deleting %d messages from the interruption queue: %w", len(batch), err))
			continue
		}
		for _, f := range out.Failed {
			if aws.ToString(f.Code) == "ReceiptHandleIsInvalid" {
				continue
			}
			id := aws.ToString(f.Id)
			if i, err := strconv.Atoi(id); err == nil && i >= 0 && i < len(batch) {
				id = batch[i].ID
			}
			errs = append(errs, fmt.Errorf("deleting message %s from the interruption queue: %s: %s", id, aws.ToString(f.Code), aws.ToString(f.Message)))
		}
	}
	return errors.Join(errs...)
}

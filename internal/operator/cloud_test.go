package operator

import (
	"context"
	"testing"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// queue is a NoticeQueue that is never read.
type queue struct{}

func (*queue) Receive(context.Context) ([]cloudprovider.QueueMessage, error) { return nil, nil }
func (*queue) Delete(context.Context, []cloudprovider.QueueMessage) error    { return nil }

// withNotices is a cloud API that offers a notice queue.
type withNotices struct {
	cloudprovider.API
	queue cloudprovider.NoticeQueue
}

func (w withNotices) Notices() cloudprovider.NoticeQueue { return w.queue }

// The operator runs the interruption controller only for a cloud that offers a queue.
func TestNoticesOf(t *testing.T) {
	q := &queue{}
	var nilQueue *queue
	cases := []struct {
		name string
		api  cloudprovider.API
		want cloudprovider.NoticeQueue
	}{
		{"a cloud without Notices", struct{ cloudprovider.API }{}, nil},
		{"a cloud with a queue", withNotices{queue: q}, q},
		{"a cloud configured without a queue", withNotices{}, nil},
		{"a cloud that returns a nil pointer", withNotices{queue: nilQueue}, nil},
	}
	for _, tc := range cases {
		if got := NoticesOf(tc.api); got != tc.want {
			t.Errorf("%s: NoticesOf = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package fakecloud

import (
	"context"
	"net/http"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// The notice queue over the remote protocol: a Receive is one long-polling POST, which
// the server holds until messages come or the queue's long poll ends. The long poll must
// stay within the client's timeout (DefaultRemoteTimeout), as SQS's 20 s does.
const (
	pathReceiveNotices = "/ReceiveNotices"
	pathDeleteNotices  = "/DeleteNotices"
	// opNotices names the queue's calls in errors.
	opNotices = "Notices"
)

// noticesOffered is a cloud that offers a notice queue, as the fake Cloud does.
type noticesOffered interface {
	Notices() cloudprovider.NoticeQueue
}

// wireMessage is a cloudprovider.QueueMessage on the wire, its body as text: it is JSON.
type wireMessage struct {
	ID     string `json:"id"`
	Handle string `json:"handle"`
	Body   string `json:"body,omitempty"`
}

type receiveNoticesRequest struct{}

type noticesResponse struct {
	Messages []wireMessage `json:"messages"`
}

type deleteNoticesRequest struct {
	Messages []wireMessage `json:"messages"`
}

type deleteNoticesResponse struct{}

// handleNotices serves the queue of cloud, or refuses with Unsupported when it offers none.
func handleNotices(mux *http.ServeMux, cloud cloudprovider.API) {
	var queue cloudprovider.NoticeQueue
	if offered, ok := cloud.(noticesOffered); ok {
		queue = offered.Notices()
	}
	unsupported := func() error {
		return cloudprovider.NewError(cloudprovider.CodeUnsupported, opNotices, "", "the fake cloud served here has no notice queue")
	}
	mux.Handle("POST "+pathReceiveNotices, handle(opNotices, func(ctx context.Context, _ *receiveNoticesRequest) (any, error) {
		if queue == nil {
			return nil, unsupported()
		}
		msgs, err := queue.Receive(ctx)
		if err != nil {
			return nil, err
		}
		resp := noticesResponse{Messages: make([]wireMessage, 0, len(msgs))}
		for _, m := range msgs {
			resp.Messages = append(resp.Messages, wireMessage{ID: m.ID, Handle: m.Handle, Body: string(m.Body)})
		}
		return resp, nil
	}))
	mux.Handle("POST "+pathDeleteNotices, handle(opNotices, func(ctx context.Context, req *deleteNoticesRequest) (any, error) {
		if queue == nil {
			return nil, unsupported()
		}
		msgs := make([]cloudprovider.QueueMessage, 0, len(req.Messages))
		for _, m := range req.Messages {
			msgs = append(msgs, cloudprovider.QueueMessage{ID: m.ID, Handle: m.Handle})
		}
		return deleteNoticesResponse{}, queue.Delete(ctx, msgs)
	}))
}

// remoteQueue is the notice queue of a fake cloud served by another process.
type remoteQueue struct{ remote *Remote }

var _ cloudprovider.NoticeQueue = remoteQueue{}

// Notices is the notice queue of the cloud the Remote reaches, so that an operator whose
// cloud lives in stratos-sim reads the queue the simulator posts to. A server whose cloud
// has no queue fails its calls with Unsupported.
func (r *Remote) Notices() cloudprovider.NoticeQueue { return remoteQueue{remote: r} }

func (q remoteQueue) Receive(ctx context.Context) ([]cloudprovider.QueueMessage, error) {
	var resp noticesResponse
	if err := q.remote.call(ctx, opNotices, pathReceiveNotices, receiveNoticesRequest{}, &resp); err != nil {
		return nil, err
	}
	msgs := make([]cloudprovider.QueueMessage, 0, len(resp.Messages))
	for _, m := range resp.Messages {
		msgs = append(msgs, cloudprovider.QueueMessage{ID: m.ID, Handle: m.Handle, Body: []byte(m.Body)})
	}
	return msgs, nil
}

func (q remoteQueue) Delete(ctx context.Context, msgs []cloudprovider.QueueMessage) error {
	req := deleteNoticesRequest{Messages: make([]wireMessage, 0, len(msgs))}
	for _, m := range msgs {
		req.Messages = append(req.Messages, wireMessage{ID: m.ID, Handle: m.Handle})
	}
	return q.remote.call(ctx, opNotices, pathDeleteNotices, req, &deleteNoticesResponse{})
}

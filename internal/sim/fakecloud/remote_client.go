package fakecloud

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// DefaultRemoteTimeout bounds one call of a Remote made with no HTTP client of its own,
// so that a hung simulator fails calls, which the operator retries, instead of stalling it.
const DefaultRemoteTimeout = 30 * time.Second

// maxResponseBytes bounds what a Remote reads; a list of many thousand instances fits.
const maxResponseBytes = 64 << 20

// Remote is a fake cloud served by another process with NewServer. It implements
// cloudprovider.API, so the operator can use a cloud whose instances outlive it.
type Remote struct {
	endpoint *url.URL
	http     *http.Client
}

var _ cloudprovider.API = (*Remote)(nil)

// ParseEndpoint checks that endpoint is an absolute http or https URL with a host. Its
// errors start with the quoted endpoint, for callers to prefix with its name.
func ParseEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q must be an http:// or https:// URL with a host, such as http://127.0.0.1:8090", endpoint)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q must have no query or fragment", endpoint)
	}
	return u, nil
}

// NewRemote returns a client of the fake cloud served at endpoint. A nil httpClient
// means one with DefaultRemoteTimeout per call.
func NewRemote(endpoint string, httpClient *http.Client) (*Remote, error) {
	u, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, fmt.Errorf("fake cloud endpoint %w", err)
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: DefaultRemoteTimeout}
	}
	return &Remote{endpoint: u, http: httpClient}, nil
}

// Name is "fake", as for the in-process cloud.
func (r *Remote) Name() string { return "fake" }

func (r *Remote) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	class, err := wireNodeClass(req.NodeClass)
	if err != nil {
		return nil, err
	}
	var resp instanceResponse
	err = r.call(ctx, cloudprovider.OpCreate, pathCreate, createRequest{
		ClientToken: req.ClientToken, NodeClass: class, Requirements: req.Requirements, Requests: req.Requests,
		Labels: req.Labels, Taints: req.Taints, Tags: req.Tags, Unavailable: req.Unavailable,
		Kubelet: req.Kubelet,
	}, &resp)
	if err != nil {
		return nil, err
	}
	return resp.Instance, nil
}

func (r *Remote) StartInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return r.batch(ctx, cloudprovider.OpStart, pathStartInstances, idsRequest{IDs: ids})
}

func (r *Remote) StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error) {
	return r.batch(ctx, cloudprovider.OpStop, pathStopInstances, idsRequest{IDs: ids, Hibernate: hibernate})
}

func (r *Remote) ForceStopInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return r.batch(ctx, cloudprovider.OpStop, pathStopInstances, idsRequest{IDs: ids, Force: true})
}

func (r *Remote) TerminateInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return r.batch(ctx, cloudprovider.OpTerminate, pathTerminateInstances, idsRequest{IDs: ids})
}

func (r *Remote) batch(ctx context.Context, op, path string, req idsRequest) (map[string]error, error) {
	var resp batchResponse
	if err := r.call(ctx, op, path, req, &resp); err != nil {
		return nil, err
	}
	errs := make(map[string]error, len(resp.Errors))
	for id, w := range resp.Errors {
		errs[id] = fromWire(op, w)
	}
	return errs, nil
}

func (r *Remote) DescribeInstances(ctx context.Context, ids []string) (map[string]*cloudprovider.Instance, error) {
	var resp describeResponse
	if err := r.call(ctx, cloudprovider.OpGet, pathDescribeInstances, idsRequest{IDs: ids}, &resp); err != nil {
		return nil, err
	}
	if resp.Instances == nil {
		resp.Instances = map[string]*cloudprovider.Instance{}
	}
	return resp.Instances, nil
}

func (r *Remote) ListInstances(ctx context.Context, tags map[string]string) ([]*cloudprovider.Instance, error) {
	var resp listResponse
	if err := r.call(ctx, cloudprovider.OpList, pathListInstances, listRequest{Tags: tags}, &resp); err != nil {
		return nil, err
	}
	return resp.Instances, nil
}

func (r *Remote) InstanceTypes(ctx context.Context, nodeClass client.Object) ([]*cloudprovider.InstanceType, error) {
	class, err := wireNodeClass(nodeClass)
	if err != nil {
		return nil, err
	}
	var resp instanceTypesResponse
	if err := r.call(ctx, cloudprovider.OpInstanceTypes, pathInstanceTypes, instanceTypesRequest{NodeClass: class}, &resp); err != nil {
		return nil, err
	}
	return resp.InstanceTypes, nil
}

// wireNodeClass rejects node classes of other kinds before the call, as the in-process
// cloud does.
func wireNodeClass(obj client.Object) (*v1beta1.FakeNodeClass, error) {
	switch nc := obj.(type) {
	case nil:
		return nil, nil
	case *v1beta1.FakeNodeClass:
		return nc, nil
	default:
		return nil, fmt.Errorf("fake cloud: node class %T is not a FakeNodeClass", obj)
	}
}

// call posts req to path and decodes the answer into resp. Every failure is a classified
// error; those of the transport are internal, hence retryable, since the simulator may
// be restarting.
func (r *Remote) call(ctx context.Context, op, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return &cloudprovider.Error{Code: cloudprovider.CodeInternal, Op: op, Message: "encoding the request", Cause: err}
	}
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint.JoinPath(path).String(), bytes.NewReader(body))
	if err != nil {
		return &cloudprovider.Error{Code: cloudprovider.CodeInternal, Op: op, Message: "building the request", Cause: err}
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpResp, err := r.http.Do(httpReq)
	if err != nil {
		// The cause keeps ctx's error, so errors.Is(err, context.Canceled) still holds.
		return &cloudprovider.Error{Code: cloudprovider.CodeInternal, Op: op, Message: "the fake cloud did not answer", Cause: err}
	}
	defer func() { _ = httpResp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(httpResp.Body, maxResponseBytes))
	if err != nil {
		return &cloudprovider.Error{Code: cloudprovider.CodeInternal, Op: op, Message: "reading the answer", Cause: err}
	}
	if httpResp.StatusCode != http.StatusOK {
		return callError(op, httpResp.StatusCode, data)
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return &cloudprovider.Error{Code: cloudprovider.CodeInternal, Op: op, Message: "decoding the answer", Cause: err}
	}
	return nil
}

// callError is the error of a failed call: the server's, or an internal one when the
// answer did not come from a fake cloud server, such as a proxy's or a wrong path's.
func callError(op string, status int, body []byte) error {
	var resp errorResponse
	if err := json.Unmarshal(body, &resp); err == nil && resp.Error != nil {
		return fromWire(op, resp.Error)
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return cloudprovider.NewError(cloudprovider.CodeInternal, op, "", "the fake cloud answered HTTP %d: %s", status, text)
}

// fromWire rebuilds a classified error; an error without a code is an internal one of op.
func fromWire(op string, w *wireError) error {
	if w == nil {
		return cloudprovider.NewError(cloudprovider.CodeInternal, op, "", "the fake cloud sent an empty error")
	}
	e := &cloudprovider.Error{Code: w.Code, Op: w.Op, InstanceID: w.InstanceID, Message: w.Message, Offerings: w.Offerings}
	if e.Code == "" {
		e.Code = cloudprovider.CodeInternal
	}
	if e.Op == "" {
		e.Op = op
	}
	if w.Cause != "" {
		e.Cause = errors.New(w.Cause)
	}
	return e
}

package fakecloud

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// The remote protocol: one POST path per method of cloudprovider.API, a JSON request
// body, and either 200 with a JSON answer or an error status with an errorResponse. It
// lets a simulator process own the cloud, so its instances outlive the operator.
const (
	pathCreate             = "/Create"
	pathStartInstances     = "/StartInstances"
	pathStopInstances      = "/StopInstances"
	pathTerminateInstances = "/TerminateInstances"
	pathDescribeInstances  = "/DescribeInstances"
	pathListInstances      = "/ListInstances"
	pathInstanceTypes      = "/InstanceTypes"
)

// maxRequestBytes bounds what the server reads, so a runaway client cannot exhaust it.
const maxRequestBytes = 16 << 20

// createRequest is cloudprovider.CreateRequest with the node class as a FakeNodeClass,
// the only kind the fake cloud accepts; null means none.
type createRequest struct {
	ClientToken  string                           `json:"clientToken,omitempty"`
	NodeClass    *v1beta1.FakeNodeClass           `json:"nodeClass,omitempty"`
	Requirements []corev1.NodeSelectorRequirement `json:"requirements,omitempty"`
	Requests     corev1.ResourceList              `json:"requests,omitempty"`
	Labels       map[string]string                `json:"labels,omitempty"`
	Taints       []corev1.Taint                   `json:"taints,omitempty"`
	Tags         map[string]string                `json:"tags,omitempty"`
	Unavailable  []cloudprovider.OfferingKey      `json:"unavailable,omitempty"`
	Kubelet      *v1beta1.KubeletConfiguration    `json:"kubelet,omitempty"`
}

type instanceResponse struct {
	Instance *cloudprovider.Instance `json:"instance"`
}

// idsRequest is the request of the batch calls and of DescribeInstances.
type idsRequest struct {
	IDs []string `json:"ids"`
	// Hibernate asks StopInstances to hibernate the instances.
	Hibernate bool `json:"hibernate,omitempty"`
	// Force asks StopInstances to force the stop.
	Force bool `json:"force,omitempty"`
}

// batchResponse holds the per-instance errors of a batch call; an absent ID succeeded.
type batchResponse struct {
	Errors map[string]*wireError `json:"errors"`
}

type describeResponse struct {
	Instances map[string]*cloudprovider.Instance `json:"instances"`
}

type listRequest struct {
	Tags map[string]string `json:"tags"`
}

type listResponse struct {
	Instances []*cloudprovider.Instance `json:"instances"`
}

type instanceTypesRequest struct {
	NodeClass *v1beta1.FakeNodeClass `json:"nodeClass,omitempty"`
}

type instanceTypesResponse struct {
	InstanceTypes []*cloudprovider.InstanceType `json:"instanceTypes"`
}

// errorResponse is the body of every answer other than 200: the whole call failed.
type errorResponse struct {
	Error *wireError `json:"error"`
}

// wireError is a cloudprovider.Error; the cause travels as text because its type cannot.
type wireError struct {
	Code       cloudprovider.ErrorCode `json:"code"`
	Op         string                  `json:"op,omitempty"`
	InstanceID string                  `json:"instanceID,omitempty"`
	Message    string                  `json:"message,omitempty"`
	Cause      string                  `json:"cause,omitempty"`
	// Offerings are those out of capacity, which the operator marks unavailable.
	Offerings []cloudprovider.OfferingKey `json:"offerings,omitempty"`
}

// toWire classifies err for the wire; an unclassified error is an internal failure of op.
func toWire(op string, err error) *wireError {
	var cloudErr *cloudprovider.Error
	if !errors.As(err, &cloudErr) {
		return &wireError{Code: cloudprovider.CodeInternal, Op: op, Message: err.Error()}
	}
	w := &wireError{Code: cloudErr.Code, Op: cloudErr.Op, InstanceID: cloudErr.InstanceID, Message: cloudErr.Message, Offerings: cloudErr.Offerings}
	if cloudErr.Cause != nil {
		w.Cause = cloudErr.Cause.Error()
	}
	return w
}

// statusOf is the HTTP status of a failed call, for logs and proxies; clients read the code.
func statusOf(code cloudprovider.ErrorCode) int {
	switch code {
	case cloudprovider.CodeNotFound:
		return http.StatusNotFound
	case cloudprovider.CodeInvalidState:
		return http.StatusConflict
	case cloudprovider.CodeThrottled:
		return http.StatusTooManyRequests
	case cloudprovider.CodeQuotaExceeded:
		return http.StatusForbidden
	case cloudprovider.CodeUnsupported:
		return http.StatusBadRequest
	case cloudprovider.CodeInsufficientCapacity:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// NewServer serves a cloud (the fake one, possibly wrapped to record calls) over HTTP to
// Remote clients in other processes. Mount it at the root of the endpoint, or under a
// prefix with http.StripPrefix.
func NewServer(cloud cloudprovider.API) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST "+pathCreate, handle(cloudprovider.OpCreate, func(ctx context.Context, req *createRequest) (any, error) {
		inst, err := cloud.Create(ctx, &cloudprovider.CreateRequest{
			ClientToken: req.ClientToken, NodeClass: nodeClassObject(req.NodeClass), Requirements: req.Requirements,
			Requests: req.Requests, Labels: req.Labels, Taints: req.Taints, Tags: req.Tags,
			Unavailable: req.Unavailable,
			Kubelet:     req.Kubelet,
		})
		return instanceResponse{Instance: inst}, err
	}))
	mux.Handle("POST "+pathStartInstances, handleBatch(cloudprovider.OpStart, func(ctx context.Context, req *idsRequest) (map[string]error, error) {
		return cloud.StartInstances(ctx, req.IDs)
	}))
	mux.Handle("POST "+pathStopInstances, handleBatch(cloudprovider.OpStop, func(ctx context.Context, req *idsRequest) (map[string]error, error) {
		if req.Force {
			return cloud.ForceStopInstances(ctx, req.IDs)
		}
		return cloud.StopInstances(ctx, req.IDs, req.Hibernate)
	}))
	mux.Handle("POST "+pathTerminateInstances, handleBatch(cloudprovider.OpTerminate, func(ctx context.Context, req *idsRequest) (map[string]error, error) {
		return cloud.TerminateInstances(ctx, req.IDs)
	}))
	mux.Handle("POST "+pathDescribeInstances, handle(cloudprovider.OpGet, func(ctx context.Context, req *idsRequest) (any, error) {
		found, err := cloud.DescribeInstances(ctx, req.IDs)
		return describeResponse{Instances: found}, err
	}))
	mux.Handle("POST "+pathListInstances, handle(cloudprovider.OpList, func(ctx context.Context, req *listRequest) (any, error) {
		list, err := cloud.ListInstances(ctx, req.Tags)
		return listResponse{Instances: list}, err
	}))
	mux.Handle("POST "+pathInstanceTypes, handle(cloudprovider.OpInstanceTypes, func(ctx context.Context, req *instanceTypesRequest) (any, error) {
		types, err := cloud.InstanceTypes(ctx, nodeClassObject(req.NodeClass))
		return instanceTypesResponse{InstanceTypes: types}, err
	}))
	handleNotices(mux, cloud)
	return mux
}

// nodeClassObject returns an untyped nil for no node class, as in-process callers pass.
func nodeClassObject(nc *v1beta1.FakeNodeClass) client.Object {
	if nc == nil {
		return nil
	}
	return nc
}

func handleBatch(op string, call func(context.Context, *idsRequest) (map[string]error, error)) http.Handler {
	return handle(op, func(ctx context.Context, req *idsRequest) (any, error) {
		errs, err := call(ctx, req)
		if err != nil {
			return nil, err
		}
		resp := batchResponse{Errors: make(map[string]*wireError, len(errs))}
		for id, instanceErr := range errs {
			resp.Errors[id] = toWire(op, instanceErr)
		}
		return resp, nil
	})
}

// handle decodes a request of type Req, calls the cloud and writes its answer or error.
func handle[Req any](op string, call func(context.Context, *Req) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes)).Decode(&req); err != nil {
			// A request the server cannot read will not improve on retry, but no code says so.
			writeJSON(w, http.StatusBadRequest, errorResponse{Error: &wireError{
				Code: cloudprovider.CodeInternal, Op: op, Message: "the fake cloud cannot decode the request: " + err.Error(),
			}})
			return
		}
		resp, err := call(r.Context(), &req)
		if err != nil {
			wire := toWire(op, err)
			writeJSON(w, statusOf(wire.Code), errorResponse{Error: wire})
			return
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The status is sent; a failed write means the client went away and has nobody to tell.
	_ = json.NewEncoder(w).Encode(body)
}

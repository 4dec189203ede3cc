package cloudprovider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// provider implements CloudProvider over a cloud's API: starts, stops, hibernations,
// terminations and describes are each batched by group commit (see batcher). Offerings
// the cloud refuses for lack of capacity are marked in unavailable, which InstanceTypes
// and Create heed.
type provider struct {
	api         API
	unavailable *UnavailableOfferings
	start       *batcher[string, struct{}]
	// stop, hibernate and forceStop are separate batchers because one StopInstances
	// call carries one mode.
	stop      *batcher[string, struct{}]
	hibernate *batcher[string, struct{}]
	forceStop *batcher[string, struct{}]
	terminate *batcher[string, struct{}]
	describe  *batcher[string, *Instance]
	described *describeCache
	maxItems  int
}

// New returns a CloudProvider that batches the calls to api of each kind (see batcher)
// within opts, records every cloud call in the stratos_cloudprovider_* metrics, and
// avoids the offerings unavailable marks; nil means a new cache with the default TTL.
func New(api API, opts BatchOptions, unavailable *UnavailableOfferings) CloudProvider {
	if unavailable == nil {
		unavailable = NewUnavailableOfferings(DefaultUnavailableOfferingTTL, nil)
	}
	maxAge := opts.DescribeMaxAge
	if maxAge == 0 {
		maxAge = DefaultBatchOptions.DescribeMaxAge
	}
	p := &provider{api: api, unavailable: unavailable, described: newDescribeCache(maxAge, opts.Clock), maxItems: cmp.Or(max(opts.MaxItems, 0), DefaultBatchOptions.MaxItems)}
	p.start = newBatcher(opts, p.actionExec(OpStart, api.StartInstances))
	p.stop = newBatcher(opts, p.actionExec(OpStop, func(ctx context.Context, ids []string) (map[string]error, error) {
		return api.StopInstances(ctx, ids, false)
	}))
	p.hibernate = newBatcher(opts, p.actionExec(OpStop, func(ctx context.Context, ids []string) (map[string]error, error) {
		return api.StopInstances(ctx, ids, true)
	}))
	p.forceStop = newBatcher(opts, p.actionExec(OpStop, api.ForceStopInstances))
	p.terminate = newBatcher(opts, p.actionExec(OpTerminate, api.TerminateInstances))
	interval := opts.DescribeInterval
	if interval == 0 {
		interval = DefaultBatchOptions.DescribeInterval
	}
	p.describe = newPacedBatcher(opts, interval, p.describeExec)
	return p
}

func (p *provider) Name() string { return p.api.Name() }

func (p *provider) Create(ctx context.Context, req *CreateRequest) (*Instance, error) {
	// Not batched: an idempotency token belongs to one launch call.
	done := p.observe(OpCreate, 1)
	instance, err := p.api.Create(ctx, p.withUnavailable(req))
	done(err)
	p.markUnavailable(err)
	err = p.limitInTheWay(ctx, req, err)
	if instance != nil {
		p.markOfferings(OpCreate, instance.RefusedOfferings)
	}
	return instance, err
}

// withUnavailable returns a copy of req that also excludes the offerings marked now; the
// caller's request is left as it was, as it may retry with it.
func (p *provider) withUnavailable(req *CreateRequest) *CreateRequest {
	marked := p.unavailable.Keys()
	if len(marked) == 0 {
		return req
	}
	out := *req
	out.Unavailable = append(slices.Clip(req.Unavailable), marked...)
	return &out
}

func (p *provider) Start(ctx context.Context, id string) error {
	_, err := p.start.do(ctx, id)
	p.described.acted(id)
	return err
}

func (p *provider) Stop(ctx context.Context, id string, hibernate bool) error {
	stop := p.stop
	if hibernate {
		stop = p.hibernate
	}
	_, err := stop.do(ctx, id)
	p.described.acted(id)
	return err
}

func (p *provider) ForceStop(ctx context.Context, id string) error {
	_, err := p.forceStop.do(ctx, id)
	p.described.acted(id)
	return err
}

func (p *provider) Terminate(ctx context.Context, id string) error {
	_, err := p.terminate.do(ctx, id)
	p.described.acted(id)
	return err
}

// Get answers from a describe at most DescribeMaxAge old, or joins the next call.
func (p *provider) Get(ctx context.Context, id string) (*Instance, error) {
	if instance, err, ok := p.described.get(id); ok {
		return instance, err
	}
	return p.describe.do(ctx, id)
}

func (p *provider) List(ctx context.Context, tags map[string]string) ([]*Instance, error) {
	done := p.observe(OpList, 1)
	instances, err := p.api.ListInstances(ctx, tags)
	done(err)
	return instances, err
}

func (p *provider) InstanceTypes(ctx context.Context, nodeClass client.Object) ([]*InstanceType, error) {
	done := p.observe(OpInstanceTypes, 1)
	types, err := p.api.InstanceTypes(ctx, nodeClass)
	done(err)
	if err != nil {
		return nil, err
	}
	return p.unavailable.Overlay(types), nil
}

// markUnavailable marks the offerings an insufficient-capacity error names, whatever the
// operation: a refused launch names those it tried, a refused start its instance's; and
// those an account limit covers, named by a launch refused by it.
func (p *provider) markUnavailable(err error) {
	var cloudErr *Error
	if !errors.As(err, &cloudErr) {
		return
	}
	switch {
	case cloudErr.Code == CodeQuotaExceeded && cloudErr.Limit != "":
		for _, key := range cloudErr.Offerings {
			p.unavailable.MarkLimited(key, cloudErr.Op, cloudErr.Limit)
		}
	case cloudErr.Code == CodeInsufficientCapacity:
		p.markOfferings(cloudErr.Op, cloudErr.Offerings)
	}
}

// markOfferings marks the offerings op found out of capacity.
func (p *provider) markOfferings(op string, keys []OfferingKey) {
	for _, key := range keys {
		p.unavailable.Mark(key, op+": "+string(CodeInsufficientCapacity))
	}
}

// actionExec turns a batch call of the API into the exec function of a batcher.
func (p *provider) actionExec(op string, call func(context.Context, []string) (map[string]error, error)) func(context.Context, []string) map[string]result[struct{}] {
	return func(ctx context.Context, ids []string) map[string]result[struct{}] {
		done := p.observe(op, len(ids))
		perID, err := call(ctx, ids)
		done(err)
		p.markUnavailable(err)
		for _, instanceErr := range perID {
			p.markUnavailable(instanceErr)
		}
		results := make(map[string]result[struct{}], len(ids))
		for _, id := range ids {
			if err != nil {
				results[id] = result[struct{}]{err: err}
				continue
			}
			results[id] = result[struct{}]{err: perID[id]}
		}
		return results
	}
}

// describeExec describes ids, and with them the other instances asked about lately
// (see describeCache), whose answers go to the cache for the asks to come.
func (p *provider) describeExec(ctx context.Context, ids []string) map[string]result[*Instance] {
	ids = slices.Concat(ids, p.described.others(ids, p.maxItems-len(ids)))
	began := p.described.now()
	done := p.observe(OpGet, len(ids))
	found, err := p.api.DescribeInstances(ctx, ids)
	done(err)
	results := make(map[string]result[*Instance], len(ids))
	defer func() {
		if err != nil {
			return // the call failed, not the instances: nothing to keep
		}
		for id, r := range results {
			p.described.store(id, began, r.value, r.err)
		}
	}()
	for _, id := range ids {
		switch instance, ok := found[id]; {
		case err != nil:
			results[id] = result[*Instance]{err: err}
		case !ok:
			results[id] = result[*Instance]{err: NewError(CodeNotFound, OpGet, id, "the cloud does not know the instance")}
		case instance.NotOwned && instance.State != StateShuttingDown && instance.State != StateTerminated:
			results[id] = result[*Instance]{err: notOwned(instance)}
		default:
			results[id] = result[*Instance]{value: instance}
		}
	}
	return results
}

// notOwned is the error of an instance that exists without the cluster's ownership tag.
func notOwned(instance *Instance) *Error {
	tag := "it carries no " + v1beta1.TagCluster + " tag"
	if cluster, ok := instance.Tags[v1beta1.TagCluster]; ok {
		tag = fmt.Sprintf("it is tagged %s=%s", v1beta1.TagCluster, cluster)
	}
	return NewError(CodeNotOwned, OpGet, instance.ID, "%s", tag)
}

// observe records one cloud call of op carrying items instances; call the returned
// function with the call's error when it ends.
func (p *provider) observe(op string, items int) func(error) {
	started := time.Now()
	name := p.api.Name()
	metrics.CloudBatchSize.WithLabelValues(name, op).Observe(float64(items))
	return func(err error) {
		code := "OK"
		if err != nil {
			code = string(CodeOf(err))
		}
		metrics.CloudCalls.WithLabelValues(name, op, code).Inc()
		metrics.CloudCallDuration.WithLabelValues(name, op).Observe(time.Since(started).Seconds())
	}
}

// limitInTheWay turns the refusal of a launch left with no offering to try, because
// every one it may use is marked unavailable, into the account limit behind the marks,
// if one is: the claim then says which limit it waits for, rather than that it found
// nothing. Any other error is returned as it is.
func (p *provider) limitInTheWay(ctx context.Context, req *CreateRequest, err error) error {
	var cloudErr *Error
	if !errors.As(err, &cloudErr) || cloudErr.Code != CodeInsufficientCapacity || len(cloudErr.Offerings) > 0 {
		return err
	}
	limited := map[OfferingKey]string{}
	for _, mark := range p.unavailable.List() {
		if mark.Limit != "" {
			limited[mark.OfferingKey] = mark.Limit
		}
	}
	if len(limited) == 0 {
		return err
	}
	types, typesErr := p.api.InstanceTypes(ctx, req.NodeClass)
	if typesErr != nil {
		return err
	}
	for _, t := range types {
		if !Fits(t.WithKubelet(req.Kubelet).Allocatable(), req.Requests) {
			continue
		}
		for _, o := range t.Offerings {
			limit, ok := limited[t.Key(o)]
			if !ok {
				continue
			}
			if satisfies, _ := Satisfies(t, o, req.Requirements); satisfies {
				return &Error{Code: CodeQuotaExceeded, Op: OpCreate, Limit: limit, Cause: err, Message: fmt.Sprintf(
					"%s: the offerings the launch may use that are left are under the account limit %s, such as %s; it is tried again once the mark expires",
					limit, limit, t.Key(o))}
			}
		}
	}
	return err
}

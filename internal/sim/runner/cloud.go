package runner

import (
	"context"
	"sync"
	"time"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// startCall is one StartInstances call the operator made: when it arrived and which
// instances it started.
type startCall struct {
	at  time.Time
	ids []string
}

// recordingCloud is the fake cloud as the operator reaches it, recording the start
// calls so that the report can measure pod marked Unschedulable → start call issued.
type recordingCloud struct {
	cloudprovider.API

	mu     sync.Mutex
	starts []startCall
}

func (r *recordingCloud) StartInstances(ctx context.Context, ids []string) (map[string]error, error) {
	r.mu.Lock()
	r.starts = append(r.starts, startCall{at: time.Now(), ids: append([]string(nil), ids...)})
	r.mu.Unlock()
	return r.API.StartInstances(ctx, ids)
}

// Notices forwards the fake cloud's notice queue, which the embedded interface hides, so
// that the server offers it to the operator.
func (r *recordingCloud) Notices() cloudprovider.NoticeQueue {
	if offered, ok := r.API.(interface {
		Notices() cloudprovider.NoticeQueue
	}); ok {
		return offered.Notices()
	}
	return nil
}

func (r *recordingCloud) startCalls() []startCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]startCall(nil), r.starts...)
}

// faults converts a scenario's faults to the fake cloud's.
func faults(f *scenario.Faults) fakecloud.Faults {
	if f == nil {
		return fakecloud.Faults{}
	}
	out := fakecloud.Faults{
		Errors:        map[string]fakecloud.ErrorFault{},
		RateLimits:    map[string]fakecloud.RateLimit{},
		NeverRegister: f.NeverRegister,
	}
	for op, e := range f.Errors {
		out.Errors[op] = fakecloud.ErrorFault{Probability: e.Probability, Code: cloudprovider.ErrorCode(e.Code)}
	}
	for op, l := range f.RateLimits {
		out.RateLimits[op] = fakecloud.RateLimit{PerSecond: l.PerSecond, Burst: l.Burst}
	}
	for _, o := range f.InsufficientCapacity {
		out.InsufficientCapacity = append(out.InsufficientCapacity, fakecloud.Offering{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType})
	}
	return out
}

package aws

import (
	"cmp"
	"context"
	"slices"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// splitter sends a batch of instance IDs to one EC2 call and, when EC2 refuses the whole
// call because of some of them, splits it so that every instance gets its own answer in
// few calls:
//
//   - An error that names instances (InvalidInstanceID.NotFound lists the unknown IDs,
//     IncorrectInstanceState names the instance) is theirs; the rest go again at once.
//   - An error about instances that names none (InsufficientInstanceCapacity on a
//     start, a quota, an unsupported hibernation) is about an offering: the batch goes
//     again one call per offering (instance type, zone, capacity type), and the instances
//     of an offering refused alone all get its error. Those of an out-of-capacity
//     offering would mostly fail one by one anyway, and the offering is then marked
//     unavailable so that starts look elsewhere.
//   - An error about the call, not its instances (throttling the SDK's retryer could
//     not absorb, an outage, a missing permission) is every remaining instance's; when
//     it is the first call's, it is the whole call's error.
//
// A batch whose one bad instance is named thus takes two calls; one with instances of k
// offerings, one of them out of capacity, takes 1+k.
type splitter struct {
	op   string
	call func(ctx context.Context, ids []string) error
	// offering is the offering of an instance of the batch.
	offering func(id string) cloudprovider.OfferingKey

	calls   int
	results map[string]error
	whole   error
}

// run sends ids and returns the error of each instance that failed, or the error of the
// whole call when the first call failed for a reason no instance explains.
func (s *splitter) run(ctx context.Context, ids []string) (map[string]error, error) {
	s.results = map[string]error{}
	s.send(ctx, ids, false)
	return s.results, s.whole
}

// send sends ids, then what the refusals leave; split says the batch is one offering's
// already.
func (s *splitter) send(ctx context.Context, ids []string, split bool) {
	for len(ids) > 0 {
		err := s.call(ctx, ids)
		s.calls++
		if err == nil {
			return
		}
		callErr := classify(s.op, "", err)
		if !aboutInstances(callErr.Code) {
			if s.calls == 1 {
				s.whole = callErr
				return
			}
			for _, id := range ids {
				s.results[id] = classify(s.op, id, err)
			}
			return
		}
		if named := namedInstances(err, ids); len(named) > 0 {
			for _, id := range named {
				s.results[id] = s.instanceError(id, err)
			}
			ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(named, id) })
			continue
		}
		groups := s.byOffering(ids)
		if split || len(groups) == 1 {
			for _, id := range ids {
				s.results[id] = s.instanceError(id, err)
			}
			return
		}
		for _, group := range groups {
			s.send(ctx, group, true)
		}
		return
	}
}

// aboutInstances reports whether an error of a whole call can be the fault of some of
// its instances only.
func aboutInstances(code cloudprovider.ErrorCode) bool {
	switch code {
	case cloudprovider.CodeNotFound, cloudprovider.CodeInvalidState, cloudprovider.CodeInsufficientCapacity,
		cloudprovider.CodeQuotaExceeded, cloudprovider.CodeInvalidParameter:
		return true
	default:
		return false
	}
}

// instanceError is the error of instance id in a refused call; an insufficient-capacity
// error carries the instance's offering, for the caller to mark unavailable.
func (s *splitter) instanceError(id string, err error) error {
	instanceErr := classify(s.op, id, err)
	if instanceErr.Code == cloudprovider.CodeInsufficientCapacity {
		instanceErr.Offerings = []cloudprovider.OfferingKey{s.offering(id)}
	}
	return instanceErr
}

// byOffering groups ids by offering, in a stable order.
func (s *splitter) byOffering(ids []string) [][]string {
	groups := map[cloudprovider.OfferingKey][]string{}
	for _, id := range ids {
		key := s.offering(id)
		groups[key] = append(groups[key], id)
	}
	keys := make([]cloudprovider.OfferingKey, 0, len(groups))
	for key := range groups {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b cloudprovider.OfferingKey) int {
		return cmp.Or(cmp.Compare(a.InstanceType, b.InstanceType), cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.CapacityType, b.CapacityType))
	})
	out := make([][]string, 0, len(keys))
	for _, key := range keys {
		out = append(out, groups[key])
	}
	return out
}

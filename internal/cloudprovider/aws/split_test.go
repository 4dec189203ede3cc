package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// refusingEC2 answers a StartInstances call as EC2 does: the whole call fails when any
// instance cannot go. Unknown instances are all named; of those in a wrong state, the
// first is named; an offering out of capacity is named by its type only, no instance.
type refusingEC2 struct {
	gone, wrongState []string
	// full offerings are out of capacity.
	full []cloudprovider.OfferingKey
	// throttleCall makes that call (1-based) throttled.
	throttleCall int

	offerings map[string]cloudprovider.OfferingKey
	calls     [][]string
}

func (f *refusingEC2) call(_ context.Context, ids []string) error {
	f.calls = append(f.calls, slices.Clone(ids))
	if len(f.calls) == f.throttleCall {
		return apiError("StartInstances", "RequestLimitExceeded", "Request limit exceeded.")
	}
	var gone []string
	for _, id := range ids {
		if slices.Contains(f.gone, id) {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		return apiError("StartInstances", "InvalidInstanceID.NotFound", fmt.Sprintf("The instance IDs '%s' do not exist", strings.Join(gone, ", ")))
	}
	for _, id := range ids {
		if slices.Contains(f.wrongState, id) {
			return apiError("StartInstances", "IncorrectInstanceState", fmt.Sprintf("The instance '%s' is not in a state from which it can be started.", id))
		}
	}
	for _, id := range ids {
		if o := f.offerings[id]; slices.Contains(f.full, o) {
			return apiError("StartInstances", "InsufficientInstanceCapacity", "We currently do not have sufficient "+o.InstanceType+" capacity.")
		}
	}
	return nil
}

// fleetOf returns n instance IDs per offering, and their offerings.
func fleetOf(n int, offerings ...cloudprovider.OfferingKey) ([]string, map[string]cloudprovider.OfferingKey) {
	var ids []string
	of := map[string]cloudprovider.OfferingKey{}
	for i, o := range offerings {
		for j := range n {
			id := fmt.Sprintf("i-%08x", i*100+j)
			ids = append(ids, id)
			of[id] = o
		}
	}
	return ids, of
}

var (
	m5a = cloudprovider.OfferingKey{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand"}
	m5b = cloudprovider.OfferingKey{InstanceType: "m5.large", Zone: "us-east-1b", CapacityType: "on-demand"}
	c5a = cloudprovider.OfferingKey{InstanceType: "c5.large", Zone: "us-east-1a", CapacityType: "on-demand"}
)

func TestSplitterGivesEveryInstanceItsOwnAnswerInFewCalls(t *testing.T) {
	ids, offerings := fleetOf(4, m5a, m5b, c5a) // 12 instances
	for _, tc := range []struct {
		name      string
		ec2       refusingEC2
		wantErrs  map[string]cloudprovider.ErrorCode
		wantCalls int
		wantWhole cloudprovider.ErrorCode
	}{
		{name: "all go", wantCalls: 1},
		{
			name:      "unknown instances named",
			ec2:       refusingEC2{gone: []string{ids[1], ids[7]}},
			wantErrs:  map[string]cloudprovider.ErrorCode{ids[1]: cloudprovider.CodeNotFound, ids[7]: cloudprovider.CodeNotFound},
			wantCalls: 2,
		},
		{
			name:      "one unknown and one in a wrong state",
			ec2:       refusingEC2{gone: []string{ids[3]}, wrongState: []string{ids[9]}},
			wantErrs:  map[string]cloudprovider.ErrorCode{ids[3]: cloudprovider.CodeNotFound, ids[9]: cloudprovider.CodeInvalidState},
			wantCalls: 3,
		},
		{
			name: "an offering out of capacity",
			ec2:  refusingEC2{full: []cloudprovider.OfferingKey{m5b}},
			wantErrs: map[string]cloudprovider.ErrorCode{
				ids[4]: cloudprovider.CodeInsufficientCapacity, ids[5]: cloudprovider.CodeInsufficientCapacity,
				ids[6]: cloudprovider.CodeInsufficientCapacity, ids[7]: cloudprovider.CodeInsufficientCapacity,
			},
			wantCalls: 4, // the refused call, then one per offering
		},
		{
			name:      "throttled",
			ec2:       refusingEC2{throttleCall: 1},
			wantCalls: 1,
			wantWhole: cloudprovider.CodeThrottled,
		},
		{
			name:     "throttled once split",
			ec2:      refusingEC2{gone: []string{ids[0]}, throttleCall: 2},
			wantErrs: map[string]cloudprovider.ErrorCode{ids[0]: cloudprovider.CodeNotFound},
			// and every other instance the throttling, below
			wantCalls: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ec2 := tc.ec2
			ec2.offerings = offerings
			s := &splitter{op: cloudprovider.OpStart, call: ec2.call, offering: func(id string) cloudprovider.OfferingKey { return offerings[id] }}
			results, whole := s.run(context.Background(), ids)
			if len(ec2.calls) != tc.wantCalls {
				t.Fatalf("%d calls %v, want %d", len(ec2.calls), ec2.calls, tc.wantCalls)
			}
			if tc.wantWhole != "" {
				if cloudprovider.CodeOf(whole) != tc.wantWhole || len(results) != 0 {
					t.Fatalf("run = %v, %v; want a whole-call %s error", results, whole, tc.wantWhole)
				}
				return
			}
			if whole != nil {
				t.Fatalf("whole-call error %v", whole)
			}
			want := maps.Clone(tc.wantErrs)
			if tc.ec2.throttleCall > 1 {
				for _, id := range ids[1:] {
					want[id] = cloudprovider.CodeThrottled
				}
			}
			got := map[string]cloudprovider.ErrorCode{}
			for id, err := range results {
				got[id] = cloudprovider.CodeOf(err)
			}
			if !maps.Equal(got, want) {
				t.Fatalf("errors %v, want %v", got, want)
			}
			for id, code := range got {
				if code != cloudprovider.CodeInsufficientCapacity {
					continue
				}
				if err := results[id].(*cloudprovider.Error); !slices.Equal(err.Offerings, []cloudprovider.OfferingKey{offerings[id]}) || err.InstanceID != id {
					t.Fatalf("error of %s: %+v, want its offering %v", id, err, offerings[id])
				}
			}
		})
	}
}

// A lone instance refused without a name is refused.
func TestSplitterLoneInstance(t *testing.T) {
	ids, offerings := fleetOf(1, m5a)
	ec2 := refusingEC2{full: []cloudprovider.OfferingKey{m5a}, offerings: offerings}
	s := &splitter{op: cloudprovider.OpStart, call: ec2.call, offering: func(id string) cloudprovider.OfferingKey { return offerings[id] }}
	results, whole := s.run(context.Background(), ids)
	if whole != nil || cloudprovider.CodeOf(results[ids[0]]) != cloudprovider.CodeInsufficientCapacity || len(ec2.calls) != 1 {
		t.Fatalf("run = %v, %v after %d calls", results, whole, len(ec2.calls))
	}
}

package aws

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Starts, stops and terminations go in two steps. One DescribeInstances call, filtered
// on the IDs, finds the instances, whether they are the cluster's and their states: an
// unknown ID is refused as not found; an instance without the cluster's tag is refused
// as not owned, whatever IAM would allow; one already where the action leads (running,
// stopping, terminated) succeeds without a call; one in a state the action does not
// apply to is refused at once. Then
// one call acts on the rest. EC2 fails that whole call when one instance cannot go (it
// changed state meanwhile, it vanished, its offering is out of capacity), so a refused
// call is split until every instance has its own answer (see splitter).

// verdict is what an action does with an instance in a given state.
type verdict int

const (
	// send the instance to the action's EC2 call.
	send verdict = iota
	// done: the instance is already where the action leads.
	done
	// refuse: the action does not apply to the instance's state.
	refuse
)

// action is one of start, stop and terminate.
type action struct {
	op     string
	decide func(types.InstanceStateName) verdict
	// kind separates instances that need calls of their own; nil means one kind.
	kind func(types.Instance) string
	// call acts on ids, all of one kind.
	call func(ctx context.Context, kind string, ids []string) error
}

// StartInstances starts the stopped instances among ids; pending and running ones are
// started already.
func (c *Cloud) StartInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return c.act(ctx, action{op: cloudprovider.OpStart, decide: startVerdict, call: func(ctx context.Context, _ string, ids []string) error {
		_, err := c.clients.EC2.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: ids})
		return err
	}}, ids)
}

// StopInstances stops the running instances among ids; stopping and stopped ones are
// stopped already. With hibernate, those launched able to hibernate hibernate.
func (c *Cloud) StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error) {
	return c.stopInstances(ctx, ids, hibernate)
}

// ForceStopInstances stops the running and the stopping instances among ids with
// StopInstances' Force: EC2 stops them without waiting for their operating systems,
// which ends a stop that hangs. Stopped ones are stopped already.
func (c *Cloud) ForceStopInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return c.act(ctx, action{op: cloudprovider.OpStop, decide: forceStopVerdict, call: func(ctx context.Context, _ string, ids []string) error {
		_, err := c.clients.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids, Force: aws.Bool(true)})
		return err
	}}, ids)
}

// Kinds of stop.
const (
	stopPlainly     = "stop"
	stopHibernating = "hibernate"
)

// stopInstances stops the running instances among ids, hibernating, when asked to, those
// launched able to (HibernationOptions configured). EC2 refuses to hibernate an
// instance launched without, so those stop plainly, in a call of their own.
func (c *Cloud) stopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error) {
	return c.act(ctx, action{
		op:     cloudprovider.OpStop,
		decide: stopVerdict,
		kind: func(inst types.Instance) string {
			if hibernate && inst.HibernationOptions != nil && aws.ToBool(inst.HibernationOptions.Configured) {
				return stopHibernating
			}
			return stopPlainly
		},
		call: func(ctx context.Context, kind string, ids []string) error {
			_, err := c.clients.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids, Hibernate: aws.Bool(kind == stopHibernating)})
			return err
		},
	}, ids)
}

// TerminateInstances terminates the instances among ids; shutting-down and terminated
// ones are terminated already.
func (c *Cloud) TerminateInstances(ctx context.Context, ids []string) (map[string]error, error) {
	return c.act(ctx, action{op: cloudprovider.OpTerminate, decide: terminateVerdict, call: func(ctx context.Context, _ string, ids []string) error {
		_, err := c.clients.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
		return err
	}}, ids)
}

func startVerdict(state types.InstanceStateName) verdict {
	switch state {
	case types.InstanceStateNamePending, types.InstanceStateNameRunning:
		return done
	case types.InstanceStateNameStopped:
		return send
	default:
		return refuse
	}
}

// stopVerdict refuses a pending instance as EC2 does: it stops once it runs.
func stopVerdict(state types.InstanceStateName) verdict {
	switch state {
	case types.InstanceStateNameStopping, types.InstanceStateNameStopped:
		return done
	case types.InstanceStateNameRunning:
		return send
	default:
		return refuse
	}
}

// forceStopVerdict sends a stopping instance too: forcing is what ends a stop that hangs.
func forceStopVerdict(state types.InstanceStateName) verdict {
	switch state {
	case types.InstanceStateNameStopped:
		return done
	case types.InstanceStateNameRunning, types.InstanceStateNameStopping:
		return send
	default:
		return refuse
	}
}

func terminateVerdict(state types.InstanceStateName) verdict {
	switch state {
	case types.InstanceStateNameShuttingDown, types.InstanceStateNameTerminated:
		return done
	default:
		return send
	}
}

// act describes the instances, decides for each, and sends those to send, one split
// call per kind. A whole-call error (throttling beyond the SDK's retries, an outage, a
// missing permission) is returned as such when the action has one kind; with several,
// it is the answer of each instance of the kind whose call failed.
func (c *Cloud) act(ctx context.Context, a action, ids []string) (map[string]error, error) {
	results := map[string]error{}
	if len(ids) == 0 {
		return results, nil
	}
	described, err := c.describeByID(ctx, a.op, ids)
	if err != nil {
		return nil, err
	}
	byKind := map[string][]string{}
	var kinds []string
	for _, id := range ids {
		inst, ok := described[id]
		switch {
		case !ok:
			results[id] = cloudprovider.NewError(cloudprovider.CodeNotFound, a.op, id, "EC2 has no instance %s", id)
			continue
		case !c.owns(inst):
			results[id] = cloudprovider.NewError(cloudprovider.CodeNotOwned, a.op, id, "instance %s is not tagged %s=%s; Stratos does not act on it", id, v1beta1.TagCluster, c.opts.ClusterName)
			continue
		}
		var state types.InstanceStateName
		if inst.State != nil {
			state = inst.State.Name
		}
		switch a.decide(state) {
		case done:
			continue
		case refuse:
			results[id] = cloudprovider.NewError(cloudprovider.CodeInvalidState, a.op, id, "cannot %s an instance that is %s", strings.ToLower(a.op), state)
			continue
		}
		kind := ""
		if a.kind != nil {
			kind = a.kind(inst)
		}
		if _, seen := byKind[kind]; !seen {
			kinds = append(kinds, kind)
		}
		if !slices.Contains(byKind[kind], id) {
			byKind[kind] = append(byKind[kind], id)
		}
	}
	for _, kind := range kinds {
		s := &splitter{
			op:       a.op,
			call:     func(ctx context.Context, ids []string) error { return a.call(ctx, kind, ids) },
			offering: func(id string) cloudprovider.OfferingKey { return offeringOf(described[id]) },
		}
		perID, whole := s.run(ctx, byKind[kind])
		if whole != nil {
			if len(kinds) == 1 {
				return nil, whole
			}
			for _, id := range byKind[kind] {
				results[id] = whole
			}
		}
		for id, err := range perID {
			results[id] = err
		}
	}
	return results, nil
}

// offeringOf is the offering an instance was bought as.
func offeringOf(inst types.Instance) cloudprovider.OfferingKey {
	var zone string
	if inst.Placement != nil {
		zone = aws.ToString(inst.Placement.AvailabilityZone)
	}
	return cloudprovider.OfferingKey{InstanceType: string(inst.InstanceType), Zone: zone, CapacityType: capacityType(inst.InstanceLifecycle)}
}

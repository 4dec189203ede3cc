package fakecloud

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// transition is a state change of one instance. It returns errWrongState when the
// instance's state does not allow it, or the cloud's refusal.
type transition func(i *instance, now time.Time, d draw) error

// errWrongState says that an instance's state does not allow a transition; apply turns
// it into an InvalidState error that names the state.
var errWrongState = errors.New("wrong state")

// allowed is the transition of a state change that only the state can refuse.
func allowed(change func(*instance, time.Time, draw) bool) transition {
	return func(i *instance, now time.Time, d draw) error {
		if !change(i, now, d) {
			return errWrongState
		}
		return nil
	}
}

// hibernation is the transition of a hibernating stop: refused, as by EC2, for an
// instance not launched able to hibernate.
func hibernation(i *instance, now time.Time, d draw) error {
	if !i.hibernation {
		return cloudprovider.NewError(cloudprovider.CodeUnsupported, cloudprovider.OpStop, i.ID,
			"the instance cannot hibernate: it was not launched with hibernation configured")
	}
	return allowed((*instance).hibernate)(i, now, d)
}

// StartInstances starts stopped instances, resuming hibernated ones; pending and running
// ones are left alone.
func (c *Cloud) StartInstances(ctx context.Context, ids []string) (map[string]error, error) {
	c.callLatency(ctx)
	return c.act(cloudprovider.OpStart, ids, allowed((*instance).start))
}

// StopInstances stops running instances, hibernating them if asked; stopping and
// stopped ones are left alone. An instance not launched able to hibernate refuses to
// hibernate with an Unsupported error.
func (c *Cloud) StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error) {
	c.callLatency(ctx)
	if hibernate {
		return c.act(cloudprovider.OpStop, ids, c.hangingStop(hibernation))
	}
	return c.act(cloudprovider.OpStop, ids, c.hangingStop(allowed((*instance).stop)))
}

// hangingStop is stop, after which, by the StopsHang fault, an instance that began to
// stop stays stopping until a forced stop ends it, as an EC2 instance whose operating
// system does not shut down does. The caller holds the lock.
func (c *Cloud) hangingStop(stop transition) transition {
	return func(i *instance, now time.Time, d draw) error {
		running := i.State == cloudprovider.StateRunning
		if err := stop(i, now, d); err != nil {
			return err
		}
		if running && i.State == cloudprovider.StateStopping && c.roll(c.faults.StopsHang) {
			i.schedule("", time.Time{})
		}
		return nil
	}
}

// hangingForcedStop is a forced stop, after which, by the ForcedStopsHang fault, the
// instance stays stopping until terminated. The caller holds the lock.
func (c *Cloud) hangingForcedStop(i *instance, now time.Time, d draw) error {
	if !i.forceStop(now, d) {
		return errWrongState
	}
	if i.State == cloudprovider.StateStopping && c.roll(c.faults.ForcedStopsHang) {
		i.schedule("", time.Time{})
	}
	return nil
}

// ForceStopInstances stops running and stopping instances without waiting for their
// operating systems, ending a stop that hangs; stopped ones are left alone.
func (c *Cloud) ForceStopInstances(ctx context.Context, ids []string) (map[string]error, error) {
	c.callLatency(ctx)
	return c.act(cloudprovider.OpStop, ids, c.hangingForcedStop)
}

// TerminateInstances terminates instances; shutting-down and terminated ones are left alone.
func (c *Cloud) TerminateInstances(ctx context.Context, ids []string) (map[string]error, error) {
	c.callLatency(ctx)
	return c.act(cloudprovider.OpTerminate, ids, allowed((*instance).terminate))
}

// act applies a transition to a batch of instances. An injected fault of the cloud fails
// the whole call; one of an instance's node class fails that instance only.
func (c *Cloud) act(op string, ids []string, do transition) (map[string]error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	if err := c.beginCall(op, now); err != nil {
		return nil, err
	}
	errs := map[string]error{}
	for _, id := range ids {
		if err := c.apply(op, id, do, now, true); err != nil {
			errs[id] = err
		}
	}
	c.notify()
	return errs, nil
}

// apply applies a transition to one instance of the caller's, rolling its node class's
// faults if asked; without faults, it is a change from outside, which may touch any
// instance. The caller holds the lock.
func (c *Cloud) apply(op, id string, do transition, now time.Time, withFaults bool) error {
	inst, ok := c.instances[id]
	if !ok {
		return cloudprovider.NewError(cloudprovider.CodeNotFound, op, id, "the cloud does not know the instance")
	}
	if withFaults {
		if !c.owned(inst) {
			return c.notOwnedError(op, inst)
		}
		if err := c.classFault(inst.faults, op, id); err != nil {
			return err
		}
		if err := c.startCapacityFault(op, inst); err != nil {
			return err
		}
	}
	err := do(inst, now, c.drawer(inst.physics))
	c.publish(inst)
	if errors.Is(err, errWrongState) {
		return cloudprovider.NewError(cloudprovider.CodeInvalidState, op, id, "cannot %s an instance that is %s", strings.ToLower(op), inst.State)
	}
	return err
}

// startCapacityFault refuses to start a stopped instance whose offering is out of
// capacity, as EC2's StartInstances answers InsufficientInstanceCapacity: a stopped
// instance holds no capacity, and a start needs it again in the instance's zone. Starting
// an instance that runs already needs nothing and is not refused. The caller holds the lock.
func (c *Cloud) startCapacityFault(op string, inst *instance) error {
	key := cloudprovider.OfferingKey{InstanceType: inst.Type, Zone: inst.Zone, CapacityType: inst.CapacityType}
	if op != cloudprovider.OpStart || inst.State != cloudprovider.StateStopped || !c.outOfCapacity(inst.faults, key) {
		return nil
	}
	err := cloudprovider.NewError(cloudprovider.CodeInsufficientCapacity, op, inst.ID,
		"insufficient capacity to start a %s in %s (injected)", inst.Type, inst.Zone)
	err.Offerings = []cloudprovider.OfferingKey{key}
	return err
}

// DescribeInstances returns the instances the cloud knows among ids, those that are not
// the caller's with NotOwned set. A node class's Get fault fails the whole call, since
// the answer has no room for per-instance errors.
func (c *Cloud) DescribeInstances(ctx context.Context, ids []string) (map[string]*cloudprovider.Instance, error) {
	c.callLatency(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	if err := c.beginCall(cloudprovider.OpGet, now); err != nil {
		return nil, err
	}
	found := map[string]*cloudprovider.Instance{}
	for _, id := range ids {
		inst, ok := c.instances[id]
		if !ok {
			continue
		}
		if err := c.classFault(inst.faults, cloudprovider.OpGet, id); err != nil {
			return nil, err
		}
		described := inst.snapshot()
		described.NotOwned = !c.owned(inst)
		found[id] = described
	}
	return found, nil
}

// ListInstances returns the caller's instances that carry every given tag and are not
// terminated, by ID.
func (c *Cloud) ListInstances(ctx context.Context, tags map[string]string) ([]*cloudprovider.Instance, error) {
	c.callLatency(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	if err := c.beginCall(cloudprovider.OpList, now); err != nil {
		return nil, err
	}
	var list []*cloudprovider.Instance
	for _, inst := range c.instances {
		if inst.State == cloudprovider.StateTerminated || !c.owned(inst) || !hasTags(inst.Tags, tags) {
			continue
		}
		list = append(list, inst.snapshot())
	}
	sort.Slice(list, func(a, b int) bool { return list[a].ID < list[b].ID })
	return list, nil
}

func hasTags(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// InstanceTypes returns copies of the catalogue's types the node class allows, with the
// offerings in its zones. Offerings the catalogue does not sell are unavailable; those the
// injected faults put out of capacity are not, as EC2's DescribeInstanceTypeOfferings
// does not tell: a refused launch or start is how the caller finds out.
func (c *Cloud) InstanceTypes(_ context.Context, nodeClass client.Object) ([]*cloudprovider.InstanceType, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[cloudprovider.OpInstanceTypes]++
	class, err := asFakeNodeClass(nodeClass)
	if err != nil {
		return nil, err
	}
	return c.instanceTypes(class), nil
}

// instanceTypes is InstanceTypes without counting a call. The caller holds the lock.
func (c *Cloud) instanceTypes(class *fakeNodeClass) []*cloudprovider.InstanceType {
	var allowedTypes, allowedZones []string
	if class != nil {
		allowedTypes, allowedZones = class.Spec.InstanceTypes, class.Spec.Zones
	}
	var types []*cloudprovider.InstanceType
	for _, t := range c.catalog {
		if len(allowedTypes) > 0 && !slices.Contains(allowedTypes, t.Name) {
			continue
		}
		t = copyInstanceType(t)
		t.Offerings = slices.DeleteFunc(t.Offerings, func(o cloudprovider.Offering) bool {
			return !slices.Contains(c.zones, o.Zone) || (len(allowedZones) > 0 && !slices.Contains(allowedZones, o.Zone))
		})
		if len(t.Offerings) == 0 {
			continue
		}
		types = append(types, t)
	}
	return types
}

// StopExternally stops a running instance as if from outside Stratos, such as the console.
func (c *Cloud) StopExternally(id string) error {
	return c.external(cloudprovider.OpStop, id, allowed((*instance).stop))
}

// StartExternally starts a stopped instance as if from outside Stratos.
func (c *Cloud) StartExternally(id string) error {
	return c.external(cloudprovider.OpStart, id, allowed((*instance).start))
}

// TerminateExternally terminates an instance as if from outside Stratos, such as a spot
// interruption.
func (c *Cloud) TerminateExternally(id string) error {
	return c.external(cloudprovider.OpTerminate, id, allowed((*instance).terminate))
}

// EndAtLaunch terminates an instance as a cloud does that accepted its launch and then
// could not boot it (on EC2, an encrypted volume whose KMS key cannot be used), with
// why as the instance's EndedAtLaunch, as the cloud's describe reports it.
func (c *Cloud) EndAtLaunch(id, why string) error {
	return c.external(cloudprovider.OpTerminate, id, func(i *instance, now time.Time, d draw) error {
		if !i.terminate(now, d) {
			return errWrongState
		}
		i.EndedAtLaunch = why
		return nil
	})
}

// external applies a transition without counting a call or injecting faults.
func (c *Cloud) external(op, id string, do transition) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	if err := c.apply(op, id, do, now, false); err != nil {
		return err
	}
	c.notify()
	return nil
}

// Vanish makes the cloud forget instances at once, as if they were terminated long ago,
// or as a describe that stopped showing them would: all of them in one step, so that no
// call sees some gone and others not. It forgets none when it does not know one.
func (c *Cloud) Vanish(ids ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if _, ok := c.instances[id]; !ok {
			return cloudprovider.NewError(cloudprovider.CodeNotFound, "Vanish", id, "the cloud does not know the instance")
		}
	}
	for _, id := range ids {
		c.forget(id)
	}
	c.notify()
	return nil
}

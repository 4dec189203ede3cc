package fakecloud

import (
	"fmt"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// reclaim is the cloud taking an instance back at a set time: a spot interruption once
// its notice passed, or a scheduled retirement. The instance begins to terminate then,
// as EC2 shuts an interrupted spot instance down when the warning's two minutes end.
type reclaim struct {
	at time.Time
	// terminateDelay is drawn when the notice is given: advance, which applies the
	// reclaim, has no source to draw from.
	terminateDelay time.Duration
}

// reclaimed terminates the instance as the reclaim r says, unless it is terminating
// already.
func (i *instance) reclaimed(r *reclaim) {
	switch i.State {
	case cloudprovider.StateShuttingDown, cloudprovider.StateTerminated:
		return
	}
	i.setState(cloudprovider.StateShuttingDown, r.at)
	i.schedule(cloudprovider.StateTerminated, r.at.Add(r.terminateDelay))
	i.shutdown(r.at)
}

// Interrupt warns that spot instances will be interrupted, posting an "EC2 Spot Instance
// Interruption Warning" for each, and terminates each once notice passes; notice is in
// scenario time, divided by the time scale as the physics are (EC2 gives two minutes,
// SpotNotice). It refuses the whole call, changing nothing, when an instance is unknown,
// not spot, or not pending or running.
func (c *Cloud) Interrupt(ids []string, notice time.Duration) error {
	if notice < 0 {
		return fmt.Errorf("fake cloud: the notice of an interruption must not be negative, got %s", notice)
	}
	return c.inject("Interrupt", ids, true, func(inst *instance, now time.Time) {
		r := &reclaim{at: now.Add(c.scaled(notice)), terminateDelay: c.drawer(inst.physics)(inst.physics.TerminateDelay)}
		inst.reclaim = r
		c.postEvent(now, func(n int) []byte { return c.spotInterruptionEvent(n, inst.ID, r.at) })
	})
}

// RecommendRebalance posts an "EC2 Instance Rebalance Recommendation" for each spot
// instance: it is at elevated risk of interruption, and nothing else happens to it. It
// refuses the whole call as Interrupt does.
func (c *Cloud) RecommendRebalance(ids []string) error {
	return c.inject("RecommendRebalance", ids, true, func(inst *instance, now time.Time) {
		c.postEvent(now, func(n int) []byte { return c.rebalanceEvent(n, inst.ID, now) })
	})
}

// ScheduleChange posts an AWS Health scheduled change for each instance, of any capacity
// type: its retirement at the clock time given, when it is terminated. It refuses the
// whole call when an instance is unknown or not pending or running, or the time is not
// to come.
func (c *Cloud) ScheduleChange(ids []string, at time.Time) error {
	if !at.After(c.clock.Now()) {
		return fmt.Errorf("fake cloud: a scheduled change must be in the future, got %s", at)
	}
	return c.inject("ScheduleChange", ids, false, func(inst *instance, now time.Time) {
		inst.reclaim = &reclaim{at: at, terminateDelay: c.drawer(inst.physics)(inst.physics.TerminateDelay)}
		c.postEvent(now, func(n int) []byte { return c.scheduledChangeEvent(n, inst.ID, now, at) })
	})
}

// inject checks every instance, then applies notify to each. The instances must be
// pending or running, and spot if spotOnly.
func (c *Cloud) inject(op string, ids []string, spotOnly bool, notify func(*instance, time.Time)) error {
	return c.applyToAll(op, ids, func(inst *instance) error {
		switch {
		case spotOnly && inst.CapacityType != v1beta1.CapacityTypeSpot:
			return cloudprovider.NewError(cloudprovider.CodeUnsupported, op, inst.ID, "the instance is %s, not spot", inst.CapacityType)
		case inst.State != cloudprovider.StatePending && inst.State != cloudprovider.StateRunning:
			return cloudprovider.NewError(cloudprovider.CodeInvalidState, op, inst.ID, "the instance is %s, not pending or running", inst.State)
		}
		return nil
	}, notify)
}

// applyToAll brings the cloud up to now, checks every instance (each must exist and
// pass check), and only then applies apply to each, so that a call refused for one
// instance changes none; the kubelets and queue waiters are told once.
func (c *Cloud) applyToAll(op string, ids []string, check func(*instance) error, apply func(*instance, time.Time)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	for _, id := range ids {
		inst, ok := c.instances[id]
		if !ok {
			return cloudprovider.NewError(cloudprovider.CodeNotFound, op, id, "the cloud does not know the instance")
		}
		if err := check(inst); err != nil {
			return err
		}
	}
	for _, id := range ids {
		apply(c.instances[id], now)
	}
	c.notify()
	return nil
}

// postEvent numbers an event, builds it and posts it to the queue. The caller holds the
// lock.
func (c *Cloud) postEvent(now time.Time, build func(n int) []byte) {
	c.events++
	c.notices.post(build(c.events), now)
}

// publish posts the state changes of an instance not yet published, when state-change
// notices are on, and forgets them. The caller holds the lock.
func (c *Cloud) publish(inst *instance) {
	changes := inst.changes
	inst.changes = nil
	if !c.stateChangeNotices() {
		return
	}
	now := c.clock.Now()
	for _, change := range changes {
		c.postEvent(now, func(n int) []byte { return c.stateChangeEvent(n, inst.ID, change.state, change.at) })
	}
}

// stateChangeNotices reports whether state transitions post notices now.
func (c *Cloud) stateChangeNotices() bool {
	switch c.stateChanges {
	case StateChangesAlways:
		return true
	case StateChangesNever:
		return false
	default:
		return c.notices.read.Load()
	}
}

// refresh brings every instance up to now, posting the notices of what happened, and
// returns the time of the next state transition or reclaim to come; zero when none is.
func (c *Cloud) refresh() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	var next time.Time
	for _, inst := range c.instances {
		for _, t := range []time.Time{inst.nextAt, reclaimTime(inst.reclaim)} {
			if t.After(now) && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
	}
	return next
}

func reclaimTime(r *reclaim) time.Time {
	if r == nil {
		return time.Time{}
	}
	return r.at
}

// scaled divides a scenario duration by the time scale.
func (c *Cloud) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.timeScale)
}

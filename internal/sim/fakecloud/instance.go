package fakecloud

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// instance is the cloud's record of one instance. Its state changes at scheduled clock
// times and is brought up to date lazily, by advance, under the cloud's lock.
type instance struct {
	cloudprovider.Instance

	token        string
	hostname     string
	privateIP    string
	instanceType *cloudprovider.InstanceType

	// What the launch asked of the kubelet.
	labels  map[string]string
	taints  []corev1.Taint
	kubelet *v1beta1.KubeletConfiguration

	physics       physics.Physics
	faults        *v1beta1.FakeFaults
	neverRegister bool
	// hibernation: the instance was launched able to hibernate, as EC2's
	// HibernationOptions.Configured; only such an instance may hibernate.
	hibernation bool

	// nextState is the state the instance reaches at nextAt, when nextAt is set.
	nextState    cloudprovider.InstanceState
	nextAt       time.Time
	terminatedAt time.Time

	boot physics.Boot
	// images are the container images on the instance's disk and its kubelet's pulls.
	images *physics.ImageStore

	// reclaim is the cloud taking the instance back at a set time, after a notice (see
	// notices_inject.go); nil when none is planned.
	reclaim *reclaim
	// sick is how the instance's kubelet misbehaves, from when, in which boot (see
	// health.go); nil while it is healthy.
	sick *sickness
	// changes are the state transitions not yet published as state-change notices.
	changes []stateChange
}

// stateChange is one transition of an instance's state, at the clock time it happened.
type stateChange struct {
	state cloudprovider.InstanceState
	at    time.Time
}

// setState moves the instance to state at the time given and records the transition
// for the state-change notices.
func (i *instance) setState(state cloudprovider.InstanceState, at time.Time) {
	if i.State == state {
		return
	}
	i.State = state
	i.changes = append(i.changes, stateChange{state: state, at: at})
}

// draw returns one jittered, time-scaled occurrence of a delay of the instance's physics.
type draw func(time.Duration) time.Duration

// snapshot returns a copy of the instance as the API reports it.
func (i *instance) snapshot() *cloudprovider.Instance {
	c := i.Instance
	c.Tags = maps.Clone(i.Tags)
	return &c
}

// advance applies the scheduled transitions that are due, and the reclaim by the cloud
// when its time came, in the order they happened.
func (i *instance) advance(now time.Time) {
	for {
		if r := i.reclaim; r != nil && !now.Before(r.at) && (i.nextAt.IsZero() || r.at.Before(i.nextAt)) {
			i.reclaim = nil
			i.reclaimed(r)
			continue
		}
		if i.nextAt.IsZero() || now.Before(i.nextAt) {
			return
		}
		at := i.nextAt
		i.nextAt = time.Time{}
		i.setState(i.nextState, at)
		if i.State == cloudprovider.StateTerminated {
			i.terminatedAt = at
		}
	}
}

func (i *instance) schedule(state cloudprovider.InstanceState, at time.Time) {
	i.nextState, i.nextAt = state, at
}

// launch schedules the first boot: running, then the Node registered and Ready.
func (i *instance) launch(now time.Time, d draw) {
	i.setState(cloudprovider.StatePending, now)
	runningAt := now.Add(d(i.physics.LaunchDelay))
	i.schedule(cloudprovider.StateRunning, runningAt)
	registerAt := runningAt.Add(d(i.physics.BootDelay))
	i.boot = physics.Boot{Number: 1, StartedAt: now, RegisterAt: registerAt, ReadyAt: registerAt.Add(d(i.physics.ReadyDelay))}
}

// start boots a stopped instance again, or resumes a hibernated one. After a boot, the
// kubelet comes back as soon as the instance runs; images pulled in earlier boots are
// still on disk, and pods ask again for those a shutdown cut short. It reports false
// when the state does not allow a start.
func (i *instance) start(now time.Time, d draw) bool {
	switch i.State {
	case cloudprovider.StatePending, cloudprovider.StateRunning:
		return true
	case cloudprovider.StateStopped:
	default:
		return false
	}
	i.setState(cloudprovider.StatePending, now)
	runningAt := now.Add(d(i.physics.StartDelay))
	i.schedule(cloudprovider.StateRunning, runningAt)
	if i.boot.Hibernated {
		i.boot = resumeBoot(i.boot, now, runningAt.Add(d(i.physics.HibernateResumeDelay)))
	} else {
		i.boot = physics.Boot{Number: i.boot.Number + 1, StartedAt: now, RegisterAt: runningAt, ReadyAt: runningAt.Add(d(i.physics.ResumeDelay))}
	}
	return true
}

// stop stops a running instance; it reports false when the state does not allow it.
func (i *instance) stop(now time.Time, d draw) bool {
	return i.stopAfter(now, d(i.physics.StopDelay), false)
}

// stopAfter stops a running instance, stopped delay after now, its boot frozen by a
// hibernation or shut down; stopping or stopped, it is left as it is. It reports false
// when the state does not allow a stop.
func (i *instance) stopAfter(now time.Time, delay time.Duration, hibernate bool) bool {
	switch i.State {
	case cloudprovider.StateStopping, cloudprovider.StateStopped:
		return true
	case cloudprovider.StateRunning:
	default:
		return false
	}
	i.setState(cloudprovider.StateStopping, now)
	i.schedule(cloudprovider.StateStopped, now.Add(delay))
	i.shutdown(now)
	i.boot.Hibernated = hibernate
	return true
}

// forceStop stops a running or stopping instance, however its stop went: a forced stop
// does not wait for the operating system, so a stop that hangs ends and a hibernation
// under way is lost. It reports false when the state does not allow it.
func (i *instance) forceStop(now time.Time, d draw) bool {
	switch i.State {
	case cloudprovider.StateStopped:
		return true
	case cloudprovider.StateRunning, cloudprovider.StateStopping:
	default:
		return false
	}
	i.setState(cloudprovider.StateStopping, now)
	i.schedule(cloudprovider.StateStopped, now.Add(d(i.physics.StopDelay)))
	i.shutdown(now)
	i.boot.Hibernated = false
	return true
}

// terminate terminates an instance in any state but terminated; it always succeeds.
func (i *instance) terminate(now time.Time, d draw) bool {
	switch i.State {
	case cloudprovider.StateShuttingDown, cloudprovider.StateTerminated:
		return true
	}
	i.setState(cloudprovider.StateShuttingDown, now)
	i.schedule(cloudprovider.StateTerminated, now.Add(d(i.physics.TerminateDelay)))
	i.shutdown(now)
	return true
}

// shutdown ends the current boot: the kubelet shuts down and image pulls in progress
// are lost.
func (i *instance) shutdown(now time.Time) {
	if !i.boot.ShutdownAt.IsZero() {
		return
	}
	i.boot.ShutdownAt = now
	i.images.Shutdown(now)
}

// nextEvent returns the earliest scheduled change after the given time: of state, or of
// what the kubelet reports.
func (i *instance) nextEvent(after time.Time) (time.Time, bool) {
	next := i.nextAt
	if !next.After(after) {
		next = time.Time{}
	}
	if r := i.reclaim; r != nil && r.at.After(after) && (next.IsZero() || r.at.Before(next)) {
		next = r.at
	}
	if i.neverRegister {
		return next, !next.IsZero()
	}
	for _, kubelet := range []func(time.Time) (time.Time, bool){i.boot.NextEvent, i.images.NextEvent} {
		if t, ok := kubelet(after); ok && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next, !next.IsZero()
}

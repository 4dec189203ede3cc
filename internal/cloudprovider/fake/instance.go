package fake

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
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
	labels map[string]string
	taints []corev1.Taint
	images []string

	physics       Physics
	faults        *v1alpha1.FakeFaults
	neverRegister bool
	// hibernation: the instance was launched able to hibernate, as EC2's
	// HibernationOptions.Configured; only such an instance may hibernate.
	hibernation bool

	// nextState is the state the instance reaches at nextAt, when nextAt is set.
	nextState    cloudprovider.InstanceState
	nextAt       time.Time
	terminatedAt time.Time

	boot boot
	// pulledAt says when each image is pulled; zero when it is not scheduled.
	pulledAt []time.Time
}

// boot is the kubelet's timeline during one run of the instance, from a launch or a start
// to a stop or a termination. A hibernation does not end the boot but freezes it; the
// next start resumes it (see hibernate.go).
type boot struct {
	number int
	// startedAt is when the launch or start call of this run was made.
	startedAt  time.Time
	registerAt time.Time
	readyAt    time.Time
	// shutdownAt is when a stop or a termination began, zero while none has.
	shutdownAt time.Time
	// hibernated: the stop at shutdownAt is a hibernation, which froze the kubelet and
	// the pods instead of shutting them down.
	hibernated bool
	// resumes counts the boot's resumes from hibernation; thawedAt is when the last one
	// thawed the processes, from when the kubelet reports again.
	resumes  int
	thawedAt time.Time
}

// reportsFrom is when the kubelet reports Ready in this run: once it is Ready and, after
// a resume, thawed.
func (b boot) reportsFrom() time.Time {
	return laterOf(b.readyAt, b.thawedAt)
}

// draw returns one jittered, time-scaled occurrence of a delay of the instance's physics.
type draw func(time.Duration) time.Duration

// snapshot returns a copy of the instance as the API reports it.
func (i *instance) snapshot() *cloudprovider.Instance {
	c := i.Instance
	c.Tags = maps.Clone(i.Tags)
	return &c
}

// advance applies the scheduled transition if it is due.
func (i *instance) advance(now time.Time) {
	if i.nextAt.IsZero() || now.Before(i.nextAt) {
		return
	}
	i.State = i.nextState
	if i.State == cloudprovider.StateTerminated {
		i.terminatedAt = i.nextAt
	}
	i.nextAt = time.Time{}
}

func (i *instance) schedule(state cloudprovider.InstanceState, at time.Time) {
	i.nextState, i.nextAt = state, at
}

// launch schedules the first boot: running, then the Node registered, Ready, images pulled.
func (i *instance) launch(now time.Time, d draw) {
	i.State = cloudprovider.StatePending
	runningAt := now.Add(d(i.physics.LaunchDelay))
	i.schedule(cloudprovider.StateRunning, runningAt)
	registerAt := runningAt.Add(d(i.physics.BootDelay))
	i.boot = boot{number: 1, startedAt: now, registerAt: registerAt, readyAt: registerAt.Add(d(i.physics.ReadyDelay))}
	i.pulledAt = make([]time.Time, len(i.images))
	i.schedulePulls(d)
}

// start boots a stopped instance again, or resumes a hibernated one. After a boot, the
// kubelet comes back as soon as the instance runs; images pulled in earlier boots are
// still on disk. It reports false when the state does not allow a start.
func (i *instance) start(now time.Time, d draw) bool {
	switch i.State {
	case cloudprovider.StatePending, cloudprovider.StateRunning:
		return true
	case cloudprovider.StateStopped:
	default:
		return false
	}
	i.State = cloudprovider.StatePending
	runningAt := now.Add(d(i.physics.StartDelay))
	i.schedule(cloudprovider.StateRunning, runningAt)
	if i.boot.hibernated {
		i.boot = i.boot.resume(now, runningAt.Add(d(i.physics.HibernateResumeDelay)))
	} else {
		i.boot = boot{number: i.boot.number + 1, startedAt: now, registerAt: runningAt, readyAt: runningAt.Add(d(i.physics.ResumeDelay))}
	}
	i.schedulePulls(d)
	return true
}

// stop stops a running instance; it reports false when the state does not allow it.
func (i *instance) stop(now time.Time, d draw) bool {
	switch i.State {
	case cloudprovider.StateStopping, cloudprovider.StateStopped:
		return true
	case cloudprovider.StateRunning:
	default:
		return false
	}
	i.State = cloudprovider.StateStopping
	i.schedule(cloudprovider.StateStopped, now.Add(d(i.physics.StopDelay)))
	i.shutdown(now)
	return true
}

// terminate terminates an instance in any state but terminated; it always succeeds.
func (i *instance) terminate(now time.Time, d draw) bool {
	switch i.State {
	case cloudprovider.StateShuttingDown, cloudprovider.StateTerminated:
		return true
	}
	i.State = cloudprovider.StateShuttingDown
	i.schedule(cloudprovider.StateTerminated, now.Add(d(i.physics.TerminateDelay)))
	i.shutdown(now)
	return true
}

// shutdown ends the current boot: the kubelet shuts down and image pulls in progress stop.
func (i *instance) shutdown(now time.Time) {
	if !i.boot.shutdownAt.IsZero() {
		return
	}
	i.boot.shutdownAt = now
	for n, at := range i.pulledAt {
		if at.After(now) {
			i.pulledAt[n] = time.Time{}
		}
	}
}

// schedulePulls schedules the images not pulled yet one after the other once the Node is Ready.
func (i *instance) schedulePulls(d draw) {
	at := i.boot.reportsFrom()
	for n := range i.pulledAt {
		if i.pulledAt[n].IsZero() {
			at = at.Add(d(i.physics.ImagePullDelay))
			i.pulledAt[n] = at
		}
	}
}

// nextEvent returns the earliest scheduled change after the given time: of state, or of
// what the kubelet reports.
func (i *instance) nextEvent(after time.Time) (time.Time, bool) {
	var next time.Time
	consider := func(t time.Time) {
		if t.After(after) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	consider(i.nextAt)
	if i.neverRegister {
		return next, !next.IsZero()
	}
	// Kubelet events after the shutdown of their boot never happen.
	for _, t := range append([]time.Time{i.boot.registerAt, i.boot.readyAt, i.boot.thawedAt}, i.pulledAt...) {
		if i.boot.shutdownAt.IsZero() || t.Before(i.boot.shutdownAt) {
			consider(t)
		}
	}
	return next, !next.IsZero()
}

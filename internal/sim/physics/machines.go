package physics

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// NodePhase is what the kubelet of a machine reports during the current boot.
type NodePhase int

const (
	// NodeAbsent: the kubelet has not registered yet during this boot, or never will.
	NodeAbsent NodePhase = iota
	// NodeNotReady: registered, waiting for the network.
	NodeNotReady
	// NodeReady: registered and Ready.
	NodeReady
	// NodeShuttingDown: a stop or termination began after the kubelet registered.
	NodeShuttingDown
	// NodeFrozen: a hibernation froze the kubelet, which reports nothing until it thaws.
	NodeFrozen
)

func (p NodePhase) String() string {
	return [...]string{"Absent", "NotReady", "Ready", "ShuttingDown", "Frozen"}[p]
}

// NodeView is what the kubelet of one machine reports at some time. It holds copies,
// so that the kubelet simulator uses it without the cloud's lock. Its InstanceType is
// the machine as the kubelet reports it, the kubelet's configuration applied.
type NodeView struct {
	InstanceID   string
	NodeName     string
	ProviderID   string
	PrivateIP    string
	InstanceType *cloudprovider.InstanceType
	// Labels and Taints are those the kubelet registers the Node with, its own labels
	// (hostname, zone, instance type…) included.
	Labels map[string]string
	Taints []corev1.Taint

	Boot int
	// Resumes counts the resumes from hibernation in this boot: the kubelet reports
	// afresh after each.
	Resumes int
	Phase   NodePhase
	// Since is when the phase began.
	Since time.Time
	// Images are the images on the machine's disk, in the order they were pulled.
	Images []string
	// Unhealthy is how the kubelet fails, since UnhealthySince, while its Node is
	// registered and not shutting down; nil while it is healthy (see health.go).
	Unhealthy      *Unhealthy
	UnhealthySince time.Time
}

// ReportsReady reports whether the kubelet reports its Node Ready: Ready in its phase,
// and not failing in a way that makes it report otherwise. A silent kubelet reports
// nothing, and its pods carry on.
func (v NodeView) ReportsReady() bool {
	return v.Phase == NodeReady && (v.Unhealthy == nil || v.Unhealthy.Silent || v.Unhealthy.Condition != "")
}

// PodHost is what the pods bound to one Node see of the machine behind it.
type PodHost struct {
	InstanceID string
	PrivateIP  string
	Boot       int
	// Running: the machine runs, so its kubelet can confirm pod deletions.
	Running bool
	// Frozen: a hibernation froze the kubelet, which writes nothing until it thaws.
	Frozen bool
	// Ready: the machine runs and its kubelet reports the Node Ready, since ReadyAt.
	Ready   bool
	ReadyAt time.Time
	// StartDelay is the container start delay of the pod asked about in this boot.
	StartDelay time.Duration
}

// Boot is the kubelet's timeline during one run of a machine, from a launch or a start
// to a stop or a termination. A hibernation does not end the boot but freezes it; the
// next start resumes it (see hibernate.go). Machines that never hibernate leave the
// hibernation fields zero.
type Boot struct {
	// Number counts the boots of the machine from 1.
	Number int
	// StartedAt is when the launch or start call of this run was made.
	StartedAt  time.Time
	RegisterAt time.Time
	ReadyAt    time.Time
	// ShutdownAt is when a stop or a termination began, zero while none has.
	ShutdownAt time.Time
	// Hibernated: the stop at ShutdownAt is a hibernation, which froze the kubelet and
	// the pods instead of shutting them down.
	Hibernated bool
	// Resumes counts the boot's resumes from hibernation; ThawedAt is when the last one
	// thawed the processes, from when the kubelet reports again.
	Resumes  int
	ThawedAt time.Time
}

// ReportsFrom is when the kubelet reports Ready in this run: once it is Ready and, after
// a resume, thawed.
func (b Boot) ReportsFrom() time.Time {
	return laterOf(b.ReadyAt, b.ThawedAt)
}

// Frozen reports whether the boot's processes are frozen at now: hibernating or
// hibernated, or resumed but not thawed yet.
func (b Boot) Frozen(now time.Time) bool {
	return (b.Hibernated && !b.ShutdownAt.IsZero()) || now.Before(b.ThawedAt)
}

// Happened reports whether a kubelet event of this boot at t took place by now: events
// after the shutdown began never do.
func (b Boot) Happened(t, now time.Time) bool {
	return !t.After(now) && (b.ShutdownAt.IsZero() || t.Before(b.ShutdownAt))
}

// Phase returns what the kubelet reports at now, and since when. A frozen boot reports
// nothing, whether it had registered or not.
func (b Boot) Phase(now time.Time) (NodePhase, time.Time) {
	switch {
	case b.Frozen(now):
		return NodeFrozen, time.Time{}
	case !b.Happened(b.RegisterAt, now):
		return NodeAbsent, time.Time{}
	case !b.ShutdownAt.IsZero():
		return NodeShuttingDown, b.ShutdownAt
	case b.Happened(b.ReadyAt, now):
		return NodeReady, b.ReportsFrom()
	default:
		return NodeNotReady, b.RegisterAt
	}
}

// PullsFrom reports whether the kubelet pulls images at now for a pod that saw the boot
// numbered boot, which it does while it reports Ready in that boot, and from when such a
// pod, there since from, needs them: not before the kubelet reports Ready, which after a
// hibernation is when it thawed. The machine must run.
func (b Boot) PullsFrom(boot int, from, now time.Time) (time.Time, bool) {
	if phase, _ := b.Phase(now); b.Number != boot || phase != NodeReady {
		return time.Time{}, false
	}
	return laterOf(from, b.ReportsFrom()), true
}

// NextEvent returns the earliest of the boot's registration, readiness and thaw after a
// resume after the given time that will happen before the shutdown.
func (b Boot) NextEvent(after time.Time) (time.Time, bool) {
	var next time.Time
	for _, t := range []time.Time{b.RegisterAt, b.ReadyAt, b.ThawedAt} {
		if t.IsZero() || !t.After(after) || (!b.ShutdownAt.IsZero() && !t.Before(b.ShutdownAt)) {
			continue
		}
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next, !next.IsZero()
}

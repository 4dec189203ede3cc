package fakecloud

import (
	"time"

	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// Hibernation, as on EC2. Only an instance launched able to hibernate (its node class's
// hibernate) may be stopped with hibernation; others refuse with Unsupported, as EC2
// answers UnsupportedHibernationConfiguration.
//
// Hibernating, the OS writes its memory to the root volume, then the instance stops:
// HibernateDelay rather than StopDelay. The processes freeze rather than shut down, so
// the kubelet reports nothing more: no graceful shutdown, no Lease renewal. What it
// reported last stays until kube-controller-manager marks the Node unknown, as for any
// node that stops reporting.
//
// The next start resumes the same boot. The instance runs after StartDelay, the memory is
// read back during HibernateResumeDelay, and then the kubelet, the CNI and the pods carry
// on where they froze: the same boot ID, no new registration, no container restarted,
// images on disk. The kubelet reports Ready again as soon as it thaws; kubelet events the
// hibernation cut short, such as a registration, happen as much later as it was frozen.

// hibernate freezes a running instance's boot and stops the instance. It reports false
// when the state does not allow a stop. Image pulls in progress are cut, and start again
// after the resume.
func (i *instance) hibernate(now time.Time, d draw) bool {
	return i.stopAfter(now, d(i.physics.HibernateDelay), true)
}

// resumeBoot is the hibernated boot b resumed by a start made at now, whose processes thaw
// at thawAt. Kubelet events before the hibernation stay; those after it move by the
// time the boot was frozen.
func resumeBoot(b physics.Boot, now, thawAt time.Time) physics.Boot {
	frozen := thawAt.Sub(b.ShutdownAt)
	shift := func(t time.Time) time.Time {
		if t.Before(b.ShutdownAt) {
			return t
		}
		return t.Add(frozen)
	}
	return physics.Boot{
		Number: b.Number, StartedAt: now,
		RegisterAt: shift(b.RegisterAt), ReadyAt: shift(b.ReadyAt),
		Resumes: b.Resumes + 1, ThawedAt: thawAt,
	}
}

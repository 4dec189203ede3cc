package physics

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Physics are the timings of the fake cloud and of the kubelets on its instances.
// docs/fake-cloud.md lists the public figures behind the defaults.
type Physics struct {
	// LaunchDelay: from the launch call to a running instance (EC2: about 10 s).
	LaunchDelay time.Duration
	// BootDelay: from a running instance to its Node registered (OS boot, kubelet start).
	BootDelay time.Duration
	// ReadyDelay: from registration to the Node Ready, once the CNI has set up the network.
	ReadyDelay time.Duration
	// StartDelay: from the start call to a running instance, for a stopped instance.
	StartDelay time.Duration
	// ResumeDelay: from a started instance running to its Node Ready again.
	ResumeDelay time.Duration
	// StopDelay: from the stop call to a stopped instance.
	StopDelay time.Duration
	// HibernateDelay: from a hibernating stop call to a stopped instance: the OS writes
	// its memory to the root volume before the instance stops.
	HibernateDelay time.Duration
	// HibernateResumeDelay: from a hibernated instance running again to its Node Ready:
	// the memory is read back, and the kubelet, which never stopped, reports again.
	HibernateResumeDelay time.Duration
	// TerminateDelay: from the terminate call to a terminated instance.
	TerminateDelay time.Duration
	// ImagePullDelay: the time to pull one image a pod on the Node needs; the machine
	// pulls one image at a time.
	ImagePullDelay time.Duration
	// ContainerStartDelay: from a pod bound to a Ready Node, or from the Node turning
	// Ready with the pod bound, to the pod's containers running and Ready.
	ContainerStartDelay time.Duration
	// JitterPercent spreads every delay uniformly by up to this share, from 0 to 100.
	JitterPercent int
}

// DefaultPhysics returns timings close to EC2 and EKS: about 40 s from a launch call to
// a Ready Node, about 13 s from a start call to a Ready Node (12 s from hibernation),
// 20 s to stop, 30 s to hibernate.
func DefaultPhysics() Physics {
	return Physics{
		LaunchDelay:          10 * time.Second,
		BootDelay:            20 * time.Second,
		ReadyDelay:           10 * time.Second,
		StartDelay:           8 * time.Second,
		ResumeDelay:          5 * time.Second,
		StopDelay:            20 * time.Second,
		HibernateDelay:       30 * time.Second,
		HibernateResumeDelay: 4 * time.Second,
		TerminateDelay:       15 * time.Second,
		ImagePullDelay:       5 * time.Second,
		ContainerStartDelay:  2 * time.Second,
		JitterPercent:        10,
	}
}

// With returns p with the fields a node class sets replaced; unset fields keep p's values.
func (p Physics) With(o *v1beta1.FakePhysics) Physics {
	if o == nil {
		return p
	}
	for _, f := range []struct {
		dst *time.Duration
		src *v1beta1.Duration
	}{
		{&p.LaunchDelay, o.LaunchDelay},
		{&p.BootDelay, o.BootDelay},
		{&p.ReadyDelay, o.ReadyDelay},
		{&p.StartDelay, o.StartDelay},
		{&p.ResumeDelay, o.ResumeDelay},
		{&p.StopDelay, o.StopDelay},
		{&p.HibernateDelay, o.HibernateDelay},
		{&p.HibernateResumeDelay, o.HibernateResumeDelay},
		{&p.TerminateDelay, o.TerminateDelay},
		{&p.ImagePullDelay, o.ImagePullDelay},
	} {
		if f.src != nil {
			*f.dst = f.src.Duration
		}
	}
	if o.JitterPercent != nil {
		p.JitterPercent = int(*o.JitterPercent)
	}
	return p
}

// Draw returns one occurrence of the delay d: multiplied by a factor uniform in
// [1-j, 1+j] for a jitter j, then divided by the time scale. No number is drawn when
// there is no jitter, so that turning jitter off does not shift the rest of the sequence.
func (p Physics) Draw(rng *rand.Rand, d time.Duration, timeScale float64) time.Duration {
	factor := 1.0
	if j := float64(min(max(p.JitterPercent, 0), 100)) / 100; j > 0 {
		factor += j * (2*rng.Float64() - 1)
	}
	return time.Duration(float64(d) * factor / timeScale)
}

// PodStartDelay draws the container start delay of the pod podKey on a machine in
// one of its boots. The jitter comes from a source seeded with the instance ID, the boot
// and the pod's key rather than from a shared source: pods are synced concurrently, in no
// set order, and drawing from a shared source would shift every later draw of the run.
// Instance IDs come from seeded sources, so the delays are as repeatable as the rest.
func (p Physics) PodStartDelay(instanceID string, boot int, podKey string, timeScale float64) time.Duration {
	return p.seededDraw(p.ContainerStartDelay, timeScale, fmt.Sprintf("%s/%d/%s", instanceID, boot, podKey))
}

// PullDelay draws the time the attempt-th pull (from 0) of image takes on a machine,
// from a source seeded with the instance ID, the image and the attempt, for the same
// reason as PodStartDelay: pods ask for images in no set order.
func (p Physics) PullDelay(instanceID, image string, attempt int, timeScale float64) time.Duration {
	return p.seededDraw(p.ImagePullDelay, timeScale, fmt.Sprintf("pull/%s/%s/%d", instanceID, image, attempt))
}

// seededDraw draws one occurrence of d from a source seeded with key.
func (p Physics) seededDraw(d time.Duration, timeScale float64, key string) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(key))
	seed := h.Sum64()
	return p.Draw(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), d, timeScale)
}

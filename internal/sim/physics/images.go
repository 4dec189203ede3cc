package physics

import (
	"slices"
	"time"
)

// imagePullBackOff is the kubelet's first back-off after a failed pull (its image
// back-off starts at 10 s): a container shows ErrImagePull until it ends, then
// ImagePullBackOff. It is a kubelet timing, scaled like the physics.
const imagePullBackOff = 10 * time.Second

// ImageStore is one machine's container images: those on its disk, which stay across
// stops and starts, and its kubelet's puller, which pulls them one at a time in the
// order pods ask for them, as the kubelet does with serialized image pulls. Images
// arrive only because a pod bound to the machine's Node needs them (Request); nothing
// else puts an image on the disk. Its owner (the fake Cloud, or the simulator's EC2
// machines) holds a lock around every call and tells it when a boot shuts down.
type ImageStore struct {
	instanceID string
	physics    Physics
	timeScale  float64
	// failing are the images whose every pull fails.
	failing []string
	// pulls are the pulls asked for, in order: each starts when the one before ends, or
	// when it is asked for if the puller is idle. Those a shutdown cut are forgotten.
	pulls []imagePull
}

// imagePull is one pull of an image: it ends at end, with the image on disk unless it
// fails.
type imagePull struct {
	image string
	end   time.Time
	fails bool
}

// ImagePullState is where an image a pod needs stands.
type ImagePullState int

const (
	// ImagePulling: queued or being pulled, until At.
	ImagePulling ImagePullState = iota
	// ImagePresent: on disk since At.
	ImagePresent
	// ImagePullFailed: the pull failed at At; the kubelet backs off from BackOffAt.
	ImagePullFailed
)

func (s ImagePullState) String() string {
	return [...]string{"Pulling", "Present", "Failed"}[s]
}

// ImagePull is where one image a pod needs stands at some time.
type ImagePull struct {
	Image     string
	State     ImagePullState
	At        time.Time
	BackOffAt time.Time
}

// NewImageStore returns the empty disk of a new machine, whose pulls take the physics'
// ImagePullDelay, jittered per machine, image and attempt; the pulls of failing images
// fail after that time.
func NewImageStore(instanceID string, physics Physics, timeScale float64, failing []string) *ImageStore {
	if timeScale <= 0 {
		timeScale = 1
	}
	return &ImageStore{instanceID: instanceID, physics: physics, timeScale: timeScale, failing: slices.Clone(failing)}
}

// Request asks for the images a pod needs, from the clock time from on (the later of
// the pod bound and the Node Ready), and returns where each stands at now, in order,
// once each. An image neither on disk nor being pulled for the pod is queued: its pull
// starts at from or when the puller is free, whichever is later. A pull that failed
// before from is tried again. It reports whether it queued a pull. The kubelet asks
// only while it runs and reports Ready.
func (s *ImageStore) Request(now, from time.Time, images []string) ([]ImagePull, bool) {
	var out []ImagePull
	queued := false
	seen := map[string]bool{}
	for _, image := range images {
		if seen[image] {
			continue
		}
		seen[image] = true
		if p, ok := s.onDisk(image, now); ok {
			out = append(out, ImagePull{Image: image, State: ImagePresent, At: p.end})
			continue
		}
		p, ok := s.serving(image, from)
		if !ok {
			p = s.queue(image, from)
			queued = true
		}
		out = append(out, s.standing(p, now))
	}
	return out, queued
}

// onDisk returns the pull that put image on the disk by now.
func (s *ImageStore) onDisk(image string, now time.Time) (imagePull, bool) {
	for _, p := range s.pulls {
		if p.image == image && !p.fails && !p.end.After(now) {
			return p, true
		}
	}
	return imagePull{}, false
}

// serving returns the pull of image that a pod needing it from from waits for: the
// first one not over before from.
func (s *ImageStore) serving(image string, from time.Time) (imagePull, bool) {
	for _, p := range s.pulls {
		if p.image == image && !p.end.Before(from) {
			return p, true
		}
	}
	return imagePull{}, false
}

// queue adds a pull of image, starting at from or when the puller is free.
func (s *ImageStore) queue(image string, from time.Time) imagePull {
	start := from
	attempt := 0
	for _, p := range s.pulls {
		start = laterOf(start, p.end)
		if p.image == image {
			attempt++
		}
	}
	p := imagePull{
		image: image,
		end:   start.Add(s.physics.PullDelay(s.instanceID, image, attempt, s.timeScale)),
		fails: slices.Contains(s.failing, image),
	}
	s.pulls = append(s.pulls, p)
	return p
}

// standing is where a pull stands at now.
func (s *ImageStore) standing(p imagePull, now time.Time) ImagePull {
	switch {
	case p.end.After(now):
		return ImagePull{Image: p.image, State: ImagePulling, At: p.end}
	case p.fails:
		backOff := time.Duration(float64(imagePullBackOff) / s.timeScale)
		return ImagePull{Image: p.image, State: ImagePullFailed, At: p.end, BackOffAt: p.end.Add(backOff)}
	default:
		return ImagePull{Image: p.image, State: ImagePresent, At: p.end}
	}
}

// Shutdown ends a boot at the clock time at: pulls that had not finished by then are
// lost, and the kubelet forgets the failed ones with the rest of its memory. What is on
// the disk stays, a pull that ended at that very moment included, as Present says.
func (s *ImageStore) Shutdown(at time.Time) {
	s.pulls = slices.DeleteFunc(s.pulls, func(p imagePull) bool { return p.fails || p.end.After(at) })
}

// Present returns the images on the disk at now, in the order they were pulled.
func (s *ImageStore) Present(now time.Time) []string {
	var images []string
	for _, p := range s.pulls {
		if !p.fails && !p.end.After(now) {
			images = append(images, p.image)
		}
	}
	return images
}

// NextEvent returns the earliest time after the given one at which an image lands on
// the disk.
func (s *ImageStore) NextEvent(after time.Time) (time.Time, bool) {
	var next time.Time
	for _, p := range s.pulls {
		if !p.fails && p.end.After(after) && (next.IsZero() || p.end.Before(next)) {
			next = p.end
		}
	}
	return next, !next.IsZero()
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

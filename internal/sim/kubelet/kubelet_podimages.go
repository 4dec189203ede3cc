package kubelet

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// The kubelets' part in a pod's images: a pod bound to a Ready Node whose containers have
// not started asks the machine for the images its containers run (Machines.PullImages);
// its containers start ContainerStartDelay after the last of them is on disk. Meanwhile
// its status says what the kubelet is doing: ContainerCreating while an image is pulled,
// ErrImagePull and then ImagePullBackOff for an image whose pull failed.

const (
	reasonContainerCreating        = "ContainerCreating"
	reasonErrImagePull             = "ErrImagePull"
	reasonImagePullBackOff         = "ImagePullBackOff"
	reasonContainersNotInitialized = "ContainersNotInitialized"
)

// podImages are the images of a pod's containers, init containers first, each once.
func podImages(pod *corev1.Pod) []string {
	var images []string
	seen := map[string]bool{}
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range containers {
			if !seen[c.Image] {
				seen[c.Image] = true
				images = append(images, c.Image)
			}
		}
	}
	return images
}

// imageWait is where a pod's images leave it at some time.
type imageWait struct {
	// present: every image is on disk, the last since presentAt.
	present   bool
	presentAt time.Time
	// next is when that changes next (a pull ends, a back-off begins); zero if never.
	next time.Time
}

func waitForImages(pulls []physics.ImagePull, now time.Time) imageWait {
	w := imageWait{present: true}
	soonest := func(t time.Time) {
		if t.After(now) && (w.next.IsZero() || t.Before(w.next)) {
			w.next = t
		}
	}
	for _, p := range pulls {
		switch p.State {
		case physics.ImagePresent:
			w.presentAt = laterOf(w.presentAt, p.At)
		case physics.ImagePulling:
			w.present = false
			soonest(p.At)
		case physics.ImagePullFailed:
			w.present = false
			soonest(p.BackOffAt)
		}
	}
	return w
}

// ranBefore reports whether the pod's containers ran, in an earlier boot of the host or
// before the kubelets saw it.
func ranBefore(pod *corev1.Pod) bool {
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range statuses {
			if s.State.Running != nil || s.State.Terminated != nil {
				return true
			}
		}
	}
	return false
}

// waitingStatus returns the status of a pod admitted on host, first seen at seen, whose
// containers wait for their images as pulls says at now: Pending, with its sandbox set
// up, and each container waiting, with the image's ID once it is on disk.
func waitingStatus(pod *corev1.Pod, host physics.PodHost, seen time.Time, pulls []physics.ImagePull, now time.Time) *corev1.PodStatus {
	s := placedStatus(pod, host, seen)
	s.Phase = corev1.PodPending
	byImage := make(map[string]physics.ImagePull, len(pulls))
	for _, p := range pulls {
		byImage[p.Image] = p
	}
	if len(pod.Spec.InitContainers) > 0 {
		setPodCondition(&s.Conditions, corev1.PodCondition{
			Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: reasonContainersNotInitialized,
			Message: "containers with incomplete status: [" + strings.Join(names(pod.Spec.InitContainers), " ") + "]", LastTransitionTime: metav1.NewTime(now),
		})
	} else {
		setPodCondition(&s.Conditions, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)})
	}
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(&s.Conditions, corev1.PodCondition{
			Type: t, Status: corev1.ConditionFalse, Reason: reasonContainersNotReady,
			Message: "containers with unready status: [" + strings.Join(names(pod.Spec.Containers), " ") + "]", LastTransitionTime: metav1.NewTime(now),
		})
	}
	s.InitContainerStatuses = waitingStatuses(pod.Spec.InitContainers, byImage, now)
	s.ContainerStatuses = waitingStatuses(pod.Spec.Containers, byImage, now)
	return s
}

// waitingStatuses are the statuses of containers not started yet, by where their images
// stand at now.
func waitingStatuses(containers []corev1.Container, pulls map[string]physics.ImagePull, now time.Time) []corev1.ContainerStatus {
	if len(containers) == 0 {
		return nil
	}
	statuses := make([]corev1.ContainerStatus, 0, len(containers))
	for _, c := range containers {
		s := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr.To(false)}
		waiting := &corev1.ContainerStateWaiting{Reason: reasonContainerCreating}
		switch p := pulls[c.Image]; p.State {
		case physics.ImagePresent:
			s.ImageID = imageID(c.Image)
		case physics.ImagePullFailed:
			waiting.Reason, waiting.Message = reasonErrImagePull, pullErrorMessage(c.Image)
			if !now.Before(p.BackOffAt) {
				waiting.Reason = reasonImagePullBackOff
				waiting.Message = fmt.Sprintf("Back-off pulling image %q: %s: %s", c.Image, reasonErrImagePull, pullErrorMessage(c.Image))
			}
		}
		s.State.Waiting = waiting
		statuses = append(statuses, s)
	}
	return statuses
}

// pullErrorMessage is what containerd answers for an image the registry does not have.
func pullErrorMessage(image string) string {
	return fmt.Sprintf("failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", image, image, image)
}

func names(containers []corev1.Container) []string {
	out := make([]string, 0, len(containers))
	for _, c := range containers {
		out = append(out, c.Name)
	}
	return out
}

package nodeclaim

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The pre-pull pod is how a warming node pulls its pool's warmup images: a pod pinned to
// the node, one container per image, so that the node's own kubelet and container
// runtime pull them, as they would for any pod, and report each image's ID in the pod's
// status. This file builds the pod and reads its status; it calls no API.

// prePullName is the name of the claim's pre-pull pod.
func prePullName(claim string) string { return "prepull-" + claim }

// prePullCommand is what each container runs once its image is on the node: a shell that
// exits at once. An image without /bin/sh (distroless, scratch) cannot start it, and its
// container ends with StartError instead; that does not matter, as the runtime pulled
// the image before it tried to start the container, and the kubelet reports its ID
// either way. The image's own entrypoint is never run: it is the workload's, not ours.
var prePullCommand = []string{"/bin/sh", "-c", "exit 0"}

// prePullGracePeriod is the pod's termination grace: its containers run nothing worth
// waiting for, so a deletion is confirmed as soon as the kubelet sees it.
const prePullGracePeriod int64 = 1

// nobody is the user the containers run as, so that the pod meets the restricted Pod
// Security Standard whatever user the image names.
const nobody int64 = 65534

// prePullPod is the pod that pulls images on the claim's Node: in namespace, pinned to
// nodeName without the scheduler, tolerating every taint (the standby taint and any
// other the node carries while it warms), owned by the claim so that the garbage
// collector removes it with the claim. Its containers ask for no resources and never
// restart, and it mounts no token and gets no service variables: it needs nothing of
// the cluster. Its security context meets the restricted Pod Security Standard.
func prePullPod(claim *v1beta1.NodeClaim, namespace, nodeName string, images []string) *corev1.Pod {
	owner := metav1.NewControllerRef(claim, v1beta1.GroupVersion.WithKind("NodeClaim"))
	// Blocking the claim's foreground deletion would need the update permission on
	// nodeclaims/finalizers where OwnerReferencesPermissionEnforcement is on; the
	// lifecycle controller removes the pod itself anyway.
	owner.BlockOwnerDeletion = nil
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            prePullName(claim.Name),
			Namespace:       namespace,
			Labels:          map[string]string{v1beta1.LabelPrePull: claim.Name},
			OwnerReferences: []metav1.OwnerReference{*owner},
		},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			RestartPolicy:                 corev1.RestartPolicyNever,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To(prePullGracePeriod),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To(nobody),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		},
	}
	for n, image := range images {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name:            fmt.Sprintf("pull-%d", n),
			Image:           image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         prePullCommand,
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				ReadOnlyRootFilesystem:   ptr.To(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		})
	}
	return pod
}

// prePullCurrent reports whether pod is the pre-pull pod claim needs now: the claim's
// own, on nodeName, pulling images in that order. Any other (a claim of the same name
// before, another Node, images the pool has changed since) is replaced.
func prePullCurrent(pod *corev1.Pod, claim *v1beta1.NodeClaim, nodeName string, images []string) bool {
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.UID != claim.UID || pod.Spec.NodeName != nodeName || len(pod.Spec.Containers) != len(images) {
		return false
	}
	for n, c := range pod.Spec.Containers {
		if c.Image != images[n] {
			return false
		}
	}
	return true
}

// pulledImage is an image on the node, with the ID the runtime reported for it.
type pulledImage struct{ image, id string }

// pullFailure is an image the kubelet failed to pull, with its reason and words.
type pullFailure struct{ image, reason, message string }

// pullProgress is what the pre-pull pod's status says of each image.
type pullProgress struct {
	pulled  []pulledImage
	failing []pullFailure
	// waiting are the images neither pulled nor failing yet.
	waiting []string
	// ended, when set, says why the pod finished without pulling every image, as when
	// the kubelet refused it: it will not pull any more.
	ended string
}

// pullFailureReasons are the reasons of a container waiting on an image that the kubelet
// could not get: it keeps retrying those of a pull, with backoff.
var pullFailureReasons = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}

// progressOf reads the pod's status: an image is pulled once its container's status has
// an image ID, as the runtime reports one only for an image it holds.
func progressOf(pod *corev1.Pod) pullProgress {
	var p pullProgress
	for _, c := range pod.Spec.Containers {
		status := containerStatus(pod, c.Name)
		switch {
		case status != nil && status.ImageID != "":
			p.pulled = append(p.pulled, pulledImage{image: c.Image, id: status.ImageID})
		case status != nil && status.State.Waiting != nil && slices.Contains(pullFailureReasons, status.State.Waiting.Reason):
			p.failing = append(p.failing, pullFailure{image: c.Image, reason: status.State.Waiting.Reason, message: status.State.Waiting.Message})
		default:
			p.waiting = append(p.waiting, c.Image)
		}
	}
	if (pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded) && !p.complete() {
		p.ended = fmt.Sprintf("pod %s/%s ended %s without pulling every image", pod.Namespace, pod.Name, pod.Status.Phase)
		if pod.Status.Reason != "" || pod.Status.Message != "" {
			p.ended += fmt.Sprintf(" (%s: %s)", pod.Status.Reason, pod.Status.Message)
		}
	}
	return p
}

func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for n := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[n].Name == name {
			return &pod.Status.ContainerStatuses[n]
		}
	}
	return nil
}

// complete reports whether every image is pulled.
func (p pullProgress) complete() bool { return len(p.failing) == 0 && len(p.waiting) == 0 }

// pulledMessage names each image with its ID, for the WarmedUp condition.
func (p pullProgress) pulledMessage() string {
	names := make([]string, 0, len(p.pulled))
	for _, i := range p.pulled {
		names = append(names, fmt.Sprintf("%s (%s)", i.image, i.id))
	}
	return fmt.Sprintf("Pulled %d images on the Node: %s", len(p.pulled), strings.Join(names, ", "))
}

// failingImages names the images that fail to pull, to tell a change of them.
func (p pullProgress) failingImages() string {
	names := make([]string, 0, len(p.failing))
	for _, f := range p.failing {
		names = append(names, f.image)
	}
	return strings.Join(names, ", ")
}

// failureMessage says which images fail to pull and why, in the kubelet's words.
func (p pullProgress) failureMessage() string {
	parts := make([]string, 0, len(p.failing))
	for _, f := range p.failing {
		parts = append(parts, fmt.Sprintf("%s (%s: %s)", f.image, f.reason, f.message))
	}
	return "Pulling fails for " + strings.Join(parts, ", ") + "; the kubelet retries until the pool's warmup timeout"
}

// missing says which images are not on the node yet and, for those failing, why.
func (p pullProgress) missing() string {
	parts := make([]string, 0, len(p.failing)+len(p.waiting))
	for _, f := range p.failing {
		parts = append(parts, fmt.Sprintf("%s (%s: %s)", f.image, f.reason, f.message))
	}
	parts = append(parts, p.waiting...)
	return "not pulled: " + strings.Join(parts, ", ")
}

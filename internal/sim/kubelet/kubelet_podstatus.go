package kubelet

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"net/netip"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/internal/sim/physics"
)

const (
	reasonContainersNotReady     = "ContainersNotReady"
	reasonReadinessGatesNotReady = "ReadinessGatesNotReady"
)

// podReady reports whether the pod shows Ready or ContainersReady, as a pod whose
// containers run does.
func podReady(pod *corev1.Pod) bool {
	return conditionTrue(pod, corev1.PodReady) || conditionTrue(pod, corev1.ContainersReady)
}

func conditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// setPodCondition replaces the condition of c's type, keeping its transition and probe
// times when the status does not change, or adds c.
func setPodCondition(conditions *[]corev1.PodCondition, c corev1.PodCondition) {
	for n := range *conditions {
		existing := &(*conditions)[n]
		if existing.Type != c.Type {
			continue
		}
		if existing.Status == c.Status {
			c.LastTransitionTime = existing.LastTransitionTime
		}
		c.LastProbeTime = existing.LastProbeTime
		*existing = c
		return
	}
	*conditions = append(*conditions, c)
}

// notReadyStatus returns the pod's status with its containers not ready, as it is
// while the Node is not Ready or before the containers started in this boot. The phase
// and container states stay: the node lifecycle controller, not the kubelet, acts on
// the pods of a node that went away.
func notReadyStatus(pod *corev1.Pod, now time.Time) *corev1.PodStatus {
	s := pod.Status.DeepCopy()
	message := "containers with unready status: [" + strings.Join(names(pod.Spec.Containers), " ") + "]"
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(&s.Conditions, corev1.PodCondition{
			Type: t, Status: corev1.ConditionFalse, Reason: reasonContainersNotReady, Message: message,
			LastTransitionTime: metav1.NewTime(now),
		})
	}
	for n := range s.ContainerStatuses {
		s.ContainerStatuses[n].Ready = false
	}
	return s
}

// readyAgainStatus returns the status of a pod whose containers kept running while the
// Node was not Ready, such as through a hibernation: the same containers, Ready again
// once the kubelet reports (readiness probes pass again), with no restart.
func readyAgainStatus(pod *corev1.Pod, now time.Time) *corev1.PodStatus {
	s := pod.Status.DeepCopy()
	setPodCondition(&s.Conditions, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)})
	setReady(s, pod, now)
	for n := range s.ContainerStatuses {
		s.ContainerStatuses[n].Ready = s.ContainerStatuses[n].State.Running != nil
	}
	return s
}

// runningStatus returns the pod's status once its containers started at startedAt on
// host, for a pod first seen at seen. Containers that ran before, in an earlier boot,
// count a restart.
func runningStatus(pod *corev1.Pod, host physics.PodHost, seen, startedAt time.Time) *corev1.PodStatus {
	s := placedStatus(pod, host, seen)
	s.Phase = corev1.PodRunning
	for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady} {
		setPodCondition(&s.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(startedAt)})
	}
	setReady(s, pod, startedAt)

	s.InitContainerStatuses = containerStatuses(pod, host, pod.Spec.InitContainers, s.InitContainerStatuses, startedAt, true)
	s.ContainerStatuses = containerStatuses(pod, host, pod.Spec.Containers, s.ContainerStatuses, startedAt, false)
	return s
}

// placedStatus returns the pod's status with what the kubelet reports once it has
// admitted the pod and set up its sandbox: the start time, the host's and the pod's
// addresses, and PodScheduled if the binding did not set it.
func placedStatus(pod *corev1.Pod, host physics.PodHost, seen time.Time) *corev1.PodStatus {
	s := pod.Status.DeepCopy()
	if s.StartTime == nil {
		s.StartTime = ptr.To(metav1.NewTime(laterOf(seen, host.ReadyAt)))
	}
	s.HostIP = host.PrivateIP
	s.HostIPs = []corev1.HostIP{{IP: host.PrivateIP}}
	if s.PodIP == "" {
		s.PodIP = podIP(pod, host)
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	}
	// The binding sets PodScheduled; a pod created bound has none, and the kubelet adds it.
	hasScheduled := false
	for _, c := range s.Conditions {
		hasScheduled = hasScheduled || c.Type == corev1.PodScheduled
	}
	if !hasScheduled {
		setPodCondition(&s.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(seen)})
	}
	return s
}

// setReady sets Ready from ContainersReady and the pod's readiness gates, as the kubelet
// does.
func setReady(s *corev1.PodStatus, pod *corev1.Pod, now time.Time) {
	view := &corev1.Pod{Status: *s}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)}
	if !conditionTrue(view, corev1.ContainersReady) {
		return
	}
	var missing []string
	for _, gate := range pod.Spec.ReadinessGates {
		if !conditionTrue(view, gate.ConditionType) {
			missing = append(missing, string(gate.ConditionType))
		}
	}
	if len(missing) > 0 {
		ready.Status, ready.Reason = corev1.ConditionFalse, reasonReadinessGatesNotReady
		ready.Message = "corresponding condition of pod readiness gate \"" + strings.Join(missing, "\", \"") + "\" does not exist or is not True"
	}
	setPodCondition(&s.Conditions, ready)
}

// containerStatuses returns the statuses of containers started at startedAt. Init
// containers ran to completion before, except sidecars, which keep running.
func containerStatuses(pod *corev1.Pod, host physics.PodHost, containers []corev1.Container, previous []corev1.ContainerStatus, startedAt time.Time, init bool) []corev1.ContainerStatus {
	if len(containers) == 0 {
		return nil
	}
	statuses := make([]corev1.ContainerStatus, 0, len(containers))
	for _, c := range containers {
		s := corev1.ContainerStatus{
			Name:        c.Name,
			Image:       c.Image,
			ImageID:     imageID(c.Image),
			ContainerID: containerID(pod, host, c.Name),
			Ready:       true,
		}
		if init && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
			// An init container other than a sidecar ran to completion.
			s.State.Terminated = &corev1.ContainerStateTerminated{
				Reason: "Completed", ContainerID: s.ContainerID,
				StartedAt: metav1.NewTime(startedAt), FinishedAt: metav1.NewTime(startedAt),
			}
			statuses = append(statuses, s)
			continue
		}
		s.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt)}
		s.Started = ptr.To(true)
		for _, p := range previous {
			if p.Name != c.Name {
				continue
			}
			s.RestartCount = p.RestartCount
			if p.State.Running != nil || p.State.Terminated != nil {
				// It ran in an earlier boot: this is a restart.
				s.RestartCount++
				s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
					ExitCode: 255, Reason: "Unknown", ContainerID: p.ContainerID,
					StartedAt: startedAtOf(p.State), FinishedAt: metav1.NewTime(startedAt),
				}
			}
		}
		statuses = append(statuses, s)
	}
	return statuses
}

func startedAtOf(state corev1.ContainerState) metav1.Time {
	switch {
	case state.Running != nil:
		return state.Running.StartedAt
	case state.Terminated != nil:
		return state.Terminated.StartedAt
	}
	return metav1.Time{}
}

// podIP is a stable address for the pod in 100.64.0.0/10, from its namespace and name;
// pods on the host's network have the host's.
func podIP(pod *corev1.Pod, host physics.PodHost) string {
	if pod.Spec.HostNetwork {
		return host.PrivateIP
	}
	h := fnv.New32a()
	h.Write([]byte(pod.Namespace + "/" + pod.Name))
	var ip [4]byte
	binary.BigEndian.PutUint32(ip[:], 100<<24|64<<16|h.Sum32()&(1<<22-1))
	if ip[3] == 0 || ip[3] == 255 {
		ip[3] = 1
	}
	return netip.AddrFrom4(ip).String()
}

// imageID is a digest reference for an image, as the container runtime reports it.
func imageID(image string) string {
	sum := sha256.Sum256([]byte(image))
	name, _, _ := strings.Cut(image, "@")
	if slash, colon := strings.LastIndex(name, "/"), strings.LastIndex(name, ":"); colon > slash {
		name = name[:colon]
	}
	return name + "@sha256:" + hex.EncodeToString(sum[:])
}

// containerID names a container of one boot of the host; it changes when the container
// is started again.
func containerID(pod *corev1.Pod, host physics.PodHost, name string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%s/%s/%s", host.InstanceID, host.Boot, pod.UID, pod.Namespace+"/"+pod.Name, name)))
	return "containerd://" + hex.EncodeToString(sum[:])
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

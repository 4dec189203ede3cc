// Package podstartup measures how long the pods Stratos provisioned take to start, from
// the pods' own timestamps, by the path that served each: a node started from standby
// for it, a node launched for it, or a node that was serving already. Provisioning tells
// it which pods it decided on (Tracker); a controller watching those pods observes each
// milestone once into stratos_pod_startup_duration_seconds.
//
// This file is the pure part: the milestones read from a pod, and the path read from
// the timestamps of its Node and of the Node's claim.
package podstartup

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/podutil"
)

// Path is how a pod was served, the path label of the metric.
type Path string

const (
	// PathStandby: the pod's node was started from standby after the pod was created.
	PathStandby Path = "standby"
	// PathCold: the pod's Node registered after the pod was created: a launch.
	PathCold Path = "cold"
	// PathExisting: the node was already serving when the pod was created.
	PathExisting Path = "existing"
)

// Milestone is how far a pod got, the milestone label of the metric.
type Milestone string

const (
	// MilestoneRunning: every container of the pod started.
	MilestoneRunning Milestone = "running"
	// MilestoneReady: the pod's Ready condition turned True.
	MilestoneReady Milestone = "ready"
)

// Milestones lists the milestones in the order a pod reaches them.
var Milestones = []Milestone{MilestoneRunning, MilestoneReady}

// Served is what decides a pod's path: when its Node was created (registered), and when
// the claim behind the Node last started from standby (zero when it never did, or when
// no claim of Stratos is behind the Node).
type Served struct {
	NodeCreated time.Time
	LastStart   time.Time
}

// Classify returns the path that served a pod created at podCreated. The API server
// keeps these timestamps to the second, so a start or a registration in the same second
// as the pod's creation counts as after it: the pod can only have been created first,
// or close enough that it waited on it.
func Classify(podCreated time.Time, s Served) Path {
	switch {
	case !s.LastStart.IsZero() && !s.LastStart.Before(podCreated):
		return PathStandby
	case !s.NodeCreated.IsZero() && !s.NodeCreated.Before(podCreated):
		return PathCold
	}
	return PathExisting
}

// ReachedAt returns when the pod reached the milestone, and false when it has not (yet).
// Running is when the last of its containers started: the latest
// status.containerStatuses[].state.running.startedAt, once every container of the spec
// runs. Ready is the lastTransitionTime of its Ready condition, once True.
func ReachedAt(pod *corev1.Pod, m Milestone) (time.Time, bool) {
	switch m {
	case MilestoneRunning:
		return runningAt(pod)
	case MilestoneReady:
		ready := podutil.Condition(pod, corev1.PodReady)
		if ready == nil || ready.Status != corev1.ConditionTrue || ready.LastTransitionTime.IsZero() {
			return time.Time{}, false
		}
		return ready.LastTransitionTime.Time, true
	}
	return time.Time{}, false
}

func runningAt(pod *corev1.Pod) (time.Time, bool) {
	if len(pod.Spec.Containers) == 0 {
		return time.Time{}, false
	}
	started := map[string]time.Time{}
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Running != nil && !s.State.Running.StartedAt.IsZero() {
			started[s.Name] = s.State.Running.StartedAt.Time
		}
	}
	var last time.Time
	for _, c := range pod.Spec.Containers {
		at, ok := started[c.Name]
		if !ok {
			return time.Time{}, false
		}
		if at.After(last) {
			last = at
		}
	}
	return last, true
}

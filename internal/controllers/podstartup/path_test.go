package podstartup

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func at(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }

// The path follows from timestamps alone: a start from standby after the pod was
// created served it, else a Node registered after it, else the node ran already.
func TestClassifyByTimestamps(t *testing.T) {
	cases := []struct {
		name   string
		served Served
		want   Path
	}{
		{"started from standby for the pod", Served{NodeCreated: at(-3600), LastStart: at(1)}, PathStandby},
		{"started in the second the pod was created", Served{NodeCreated: at(-3600), LastStart: at(0)}, PathStandby},
		{"started before the pod, for others", Served{NodeCreated: at(-3600), LastStart: at(-5)}, PathExisting},
		{"launched for the pod", Served{NodeCreated: at(40)}, PathCold},
		{"registered in the pod's second", Served{NodeCreated: at(0)}, PathCold},
		{"a node that ran already", Served{NodeCreated: at(-600)}, PathExisting},
		{"a node started long ago", Served{NodeCreated: at(-7200), LastStart: at(-3600)}, PathExisting},
		{"nothing known", Served{}, PathExisting},
	}
	for _, tc := range cases {
		if got := Classify(at(0), tc.served); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func running(name string, startedAt time.Time) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt)}}}
}

// Running is when the last container started, once all of them run; Ready is the Ready
// condition's transition to True.
func TestMilestonesFromThePodsTimestamps(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}}}}
	if _, ok := ReachedAt(pod, MilestoneRunning); ok {
		t.Fatal("running with no container status")
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{running("app", at(12)),
		{Name: "sidecar", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	if _, ok := ReachedAt(pod, MilestoneRunning); ok {
		t.Fatal("running while a container waits")
	}
	pod.Status.ContainerStatuses[1] = running("sidecar", at(14))
	if got, ok := ReachedAt(pod, MilestoneRunning); !ok || !got.Equal(at(14)) {
		t.Fatalf("running at %v (%v), want the last start, %v", got, ok, at(14))
	}
	if _, ok := ReachedAt(pod, MilestoneReady); ok {
		t.Fatal("ready without a Ready condition")
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(at(13))}}
	if _, ok := ReachedAt(pod, MilestoneReady); ok {
		t.Fatal("ready while Ready is False")
	}
	pod.Status.Conditions[0] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(17))}
	if got, ok := ReachedAt(pod, MilestoneReady); !ok || !got.Equal(at(17)) {
		t.Fatalf("ready at %v (%v), want %v", got, ok, at(17))
	}
}

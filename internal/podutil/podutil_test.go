package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

func TestFinished(t *testing.T) {
	for phase, want := range map[corev1.PodPhase]bool{
		corev1.PodPending: false, corev1.PodRunning: false, corev1.PodSucceeded: true, corev1.PodFailed: true, corev1.PodUnknown: false,
	} {
		if got := Finished(&corev1.Pod{Status: corev1.PodStatus{Phase: phase}}); got != want {
			t.Errorf("Finished(%s) = %v, want %v", phase, got, want)
		}
	}
}

func TestOwnedByDaemonSet(t *testing.T) {
	owned := func(kind string, controller bool) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{Kind: kind, Name: "x", Controller: ptr.To(controller)}}}}
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"controlled by a DaemonSet", owned("DaemonSet", true), true},
		{"owned but not controlled by a DaemonSet", owned("DaemonSet", false), false},
		{"controlled by a ReplicaSet", owned("ReplicaSet", true), false},
		{"no owner", &corev1.Pod{}, false},
	}
	for _, c := range cases {
		if got := OwnedByDaemonSet(c.pod); got != c.want {
			t.Errorf("%s: OwnedByDaemonSet = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMirror(t *testing.T) {
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "abc"}}}
	if !Mirror(mirror) || Mirror(&corev1.Pod{}) {
		t.Error("Mirror must tell a mirror pod by its annotation")
	}
}

func TestPrePull(t *testing.T) {
	prePull := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelPrePull: "pool-abc"}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	if !PrePull(prePull) || PrePull(other) || PrePull(&corev1.Pod{}) {
		t.Error("PrePull must tell the pre-pull pod by its label, and only it")
	}
}

package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
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
	claim := metav1.OwnerReference{APIVersion: "stratos.sh/v1beta1", Kind: "NodeClaim", Name: "pool-abc", UID: "c", Controller: ptr.To(true)}
	pod := func(namespace string, labels map[string]string, owners ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Labels: labels, OwnerReferences: owners}}
	}
	label := map[string]string{v1beta1.LabelPrePull: "pool-abc"}
	notController := claim
	notController.Controller = nil
	otherGroup := claim
	otherGroup.APIVersion = "example.com/v1"
	cases := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"Stratos's pre-pull pod":                        {pod("stratos", label, claim), true},
		"owned by a claim without the label":            {pod("stratos", nil, claim), true},
		"a user's pod with the label":                   {pod("shop", label), false},
		"a user's pod with the label in the namespace":  {pod("stratos", label), false},
		"owned by a claim in another namespace":         {pod("shop", label, claim), false},
		"a claim that is an owner but not a controller": {pod("stratos", label, notController), false},
		"a NodeClaim of another group":                  {pod("stratos", label, otherGroup), false},
		"a bare pod":                                    {pod("stratos", nil), false},
	}
	for name, tc := range cases {
		if got := PrePull(tc.pod, "stratos"); got != tc.want {
			t.Errorf("%s: PrePull = %v, want %v", name, got, tc.want)
		}
	}
}

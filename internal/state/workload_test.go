package state

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestWorkload(t *testing.T) {
	daemon := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "cni", Controller: ptr.To(true)}
	replica := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", Controller: ptr.To(true)}
	cases := map[string]struct {
		pod  corev1.Pod
		want bool
	}{
		"a Deployment's pod": {corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{replica}}}, true},
		"a bare pod":         {corev1.Pod{}, true},
		"a DaemonSet's pod":  {corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{daemon}}}, false},
		"a mirror pod":       {corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}}}, false},
		"a finished pod":     {corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, false},
		"a failed pod":       {corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}, false},
		// Stratos's pre-pull pods never reach Workload (the cluster state leaves them
		// out); the label alone makes no pod one.
		"a pod labelled as a pre-pull pod": {corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1beta1.LabelPrePull: "c"}}}, true},
	}
	for name, tc := range cases {
		if got := Workload(&tc.pod); got != tc.want {
			t.Errorf("%s: Workload = %v, want %v", name, got, tc.want)
		}
	}
}

// Package provisioning_test runs provisioning against a real kube-apiserver with the
// fake cloud. Nothing runs kube-scheduler here, so the tests mark pods Unschedulable
// themselves, as kube-scheduler would.
package provisioning_test

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// pendingPods creates n pods asking for cpu and memory in namespace and marks them
// Unschedulable; tune changes each before creation.
func pendingPods(f *stack.Fixture, namespace, prefix string, n int, cpu, memory string, tune func(*corev1.Pod)) []*corev1.Pod {
	f.T.Helper()
	out := make([]*corev1.Pod, n)
	for i := range out {
		pod := newPod(namespace, fmt.Sprintf("%s-%d", prefix, i), cpu, memory)
		pod.Labels["app"] = prefix
		if tune != nil {
			tune(pod)
		}
		f.Create(pod)
		f.MarkUnschedulable(pod)
		out[i] = pod
	}
	return out
}

// newPod is a pod asking for cpu and memory.
func newPod(namespace, name, cpu, memory string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
		}}}},
	}
}

// claimsAskedToRun returns the pool's claims whose desired state is Running.
func claimsAskedToRun(f *stack.Fixture, pool string) []v1beta1.NodeClaim {
	var out []v1beta1.NodeClaim
	for _, c := range f.Claims(pool) {
		if c.Spec.DesiredState == v1beta1.DesiredRunning {
			out = append(out, c)
		}
	}
	return out
}

// eventNotes returns the notes of the Events about an object with a reason.
func eventNotes(f *stack.Fixture, name, reason string) []string {
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events); err != nil {
		f.T.Fatal(err)
	}
	var notes []string
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

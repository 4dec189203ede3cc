package chart_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// podsDecidedTogether creates a pending pod for each CPU request, marked Unschedulable,
// while pool is paused, and resumes the pool once provisioning has reported every pod
// (NoNodePoolFits: a paused pool takes part in no decision). The pool's change then
// opens one batch that decides on all of them: pods of different sizes make a decision
// that reserves its claims (docs/provisioning.md#reservations), where one pod alone, or
// pods alike, would be placed without a write to the pods.
func podsDecidedTogether(ctx context.Context, t *testing.T, admin client.Client, pool string, cpu map[string]string) []*corev1.Pod {
	t.Helper()
	setPaused(ctx, t, admin, pool, true)
	var pods []*corev1.Pod
	for name, request := range cpu {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(request), corev1.ResourceMemory: resource.MustParse("128Mi")},
			}}}},
		}
		if err := admin.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		base := pod.DeepCopy()
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, LastTransitionTime: metav1.Now()}}
		if err := admin.Status().Patch(ctx, pod, client.MergeFrom(base)); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, pod)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		events := &eventsv1.EventList{}
		if err := admin.List(ctx, events, client.InNamespace("default")); err != nil {
			return false, err
		}
		for _, pod := range pods {
			if !slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
				return e.Regarding.UID == pod.UID && e.Reason == "NoNodePoolFits"
			}) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("waiting for provisioning to report the pods while their pool is paused: %v", err)
	}
	setPaused(ctx, t, admin, pool, false)
	return pods
}

func setPaused(ctx context.Context, t *testing.T, admin client.Client, name string, paused bool) {
	t.Helper()
	pool := &v1beta1.NodePool{}
	if err := admin.Get(ctx, client.ObjectKey{Name: name}, pool); err != nil {
		t.Fatal(err)
	}
	base := pool.DeepCopy()
	pool.Spec.Paused = paused
	if err := admin.Patch(ctx, pool, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}

// waitForReservation waits until pod tolerates a claim's reservation, as the operator's
// patch gives it.
func waitForReservation(ctx context.Context, t *testing.T, admin client.Client, pod *corev1.Pod) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		return slices.ContainsFunc(pod.Spec.Tolerations, func(tol corev1.Toleration) bool {
			return tol.Key == v1beta1.TaintReservedKey
		}), nil
	})
	if err != nil {
		t.Fatalf("waiting for pod %s to be given a reservation: %v; its tolerations: %+v", pod.Name, err, pod.Spec.Tolerations)
	}
}

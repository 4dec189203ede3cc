package nodeclaim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func prePullClaim() *v1beta1.NodeClaim {
	claim := testClaim(v1beta1.DesiredStandby)
	claim.UID = "uid-1"
	return claim
}

// The pod has the contract's shape: the fields another reader (the kubelet simulators,
// an admission policy) relies on.
func TestPrePullPodShape(t *testing.T) {
	claim := prePullClaim()
	pod := prePullPod(claim, "stratos", "node-1", []string{"registry.example/app:1", "registry.example/sidecar:2"})

	if pod.Name != "prepull-web-abc" || pod.Namespace != "stratos" || pod.Labels[v1beta1.LabelPrePull] != "web-abc" {
		t.Errorf("name %s/%s, labels %v", pod.Namespace, pod.Name, pod.Labels)
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.UID != claim.UID || owner.Kind != "NodeClaim" || owner.APIVersion != v1beta1.GroupVersion.String() {
		t.Errorf("owner %+v", owner)
	}
	spec := pod.Spec
	if spec.NodeName != "node-1" || spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("nodeName %q, restartPolicy %q", spec.NodeName, spec.RestartPolicy)
	}
	if len(spec.Tolerations) != 1 || spec.Tolerations[0].Operator != corev1.TolerationOpExists || spec.Tolerations[0].Key != "" || spec.Tolerations[0].Effect != "" {
		t.Errorf("tolerations %+v, want one that tolerates every taint", spec.Tolerations)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken || spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Error("the pod mounts a token or gets service links")
	}
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds > 2 {
		t.Errorf("termination grace %v, want a short one", spec.TerminationGracePeriodSeconds)
	}
	if len(spec.Containers) != 2 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	for n, want := range []struct{ name, image string }{{"pull-0", "registry.example/app:1"}, {"pull-1", "registry.example/sidecar:2"}} {
		c := spec.Containers[n]
		if c.Name != want.name || c.Image != want.image || c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("container %d: %s %s %s", n, c.Name, c.Image, c.ImagePullPolicy)
		}
		if len(c.Resources.Requests) != 0 || len(c.Resources.Limits) != 0 {
			t.Errorf("container %d asks for resources: %+v", n, c.Resources)
		}
		if len(c.Command) == 0 {
			t.Errorf("container %d runs the image's own entrypoint", n)
		}
	}
}

func TestPrePullCurrent(t *testing.T) {
	claim := prePullClaim()
	images := []string{"a:1", "b:1"}
	pod := prePullPod(claim, "ns", "node-1", images)
	if !prePullCurrent(pod, claim, "node-1", images) {
		t.Error("the pod built for the claim is not current")
	}
	other := claim.DeepCopy()
	other.UID = "uid-2"
	cases := map[string]bool{
		"another claim of that name": prePullCurrent(pod, other, "node-1", images),
		"another Node":               prePullCurrent(pod, claim, "node-2", images),
		"an image more":              prePullCurrent(pod, claim, "node-1", []string{"a:1", "b:1", "c:1"}),
		"an image changed":           prePullCurrent(pod, claim, "node-1", []string{"a:1", "b:2"}),
	}
	for what, current := range cases {
		if current {
			t.Errorf("%s: the pod counts as current", what)
		}
	}
}

func withStatuses(pod *corev1.Pod, statuses ...corev1.ContainerStatus) *corev1.Pod {
	pod.Status.ContainerStatuses = statuses
	return pod
}

func waitingOn(name, reason, message string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
}

func TestProgressOf(t *testing.T) {
	images := []string{"a:1", "b:1", "c:1"}
	build := func() *corev1.Pod { return prePullPod(prePullClaim(), "ns", "n", images) }

	p := progressOf(build())
	if p.complete() || len(p.waiting) != 3 {
		t.Errorf("a pod without status: %+v", p)
	}

	p = progressOf(withStatuses(build(),
		corev1.ContainerStatus{Name: "pull-0", ImageID: "a@sha256:aa", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError"}}},
		waitingOn("pull-1", "ImagePullBackOff", `Back-off pulling image "b:1"`),
		waitingOn("pull-2", "ContainerCreating", ""),
	))
	if p.complete() || len(p.pulled) != 1 || p.pulled[0] != (pulledImage{"a:1", "a@sha256:aa"}) {
		t.Errorf("pulled %+v", p.pulled)
	}
	if len(p.failing) != 1 || p.failing[0].image != "b:1" || p.failing[0].reason != "ImagePullBackOff" {
		t.Errorf("failing %+v", p.failing)
	}
	if len(p.waiting) != 1 || p.waiting[0] != "c:1" {
		t.Errorf("waiting %v", p.waiting)
	}
	for _, want := range []string{"b:1 (ImagePullBackOff: Back-off pulling image \"b:1\")", "c:1"} {
		if !strings.Contains(p.missing(), want) {
			t.Errorf("missing() = %q, lacks %q", p.missing(), want)
		}
	}
	if strings.Contains(p.missing(), "a:1") {
		t.Errorf("missing() = %q names a pulled image", p.missing())
	}

	p = progressOf(withStatuses(build(),
		corev1.ContainerStatus{Name: "pull-0", ImageID: "a@sha256:aa"},
		corev1.ContainerStatus{Name: "pull-1", ImageID: "b@sha256:bb"},
		corev1.ContainerStatus{Name: "pull-2", ImageID: "c@sha256:cc"},
	))
	if !p.complete() || p.ended != "" {
		t.Errorf("every image has an ID: %+v", p)
	}
	for _, want := range []string{"a:1 (a@sha256:aa)", "b:1 (b@sha256:bb)", "c:1 (c@sha256:cc)"} {
		if !strings.Contains(p.pulledMessage(), want) {
			t.Errorf("pulledMessage() = %q, lacks %q", p.pulledMessage(), want)
		}
	}

	rejected := build()
	rejected.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfpods", Message: "Node didn't have enough resource: pods"}
	if p := progressOf(rejected); !strings.Contains(p.ended, "OutOfpods") {
		t.Errorf("a pod the kubelet rejected: ended = %q", p.ended)
	}
}

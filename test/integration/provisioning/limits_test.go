package provisioning_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// A pool's limits count its running nodes. With two running 4-CPU nodes, full, and
// limits of 2 nodes and 8 CPUs, the next pending pod gets no third node, only the Event
// that names the limit. On main before the fix, provisioning counted only the claims not
// running yet and launched a third node.
func TestLimitsCountTheRunningNodes(t *testing.T) {
	f := stack.NewFixture(t, nil)
	xlargeClass(f)
	f.Pool("capped", 2, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef.Name = "xlarge"
		p.Spec.Limits = v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("2"), corev1.ResourceCPU: resource.MustParse("8")}
	})
	for i, c := range f.WaitForPhase("capped", 2, v1beta1.PhaseStandby) {
		f.SetDesired(c.Name, v1beta1.DesiredRunning)
		running := f.WaitForClaim(c.Name, v1beta1.PhaseRunning)
		busy := newPod("default", fmt.Sprintf("busy-%d", i), "3", "1Gi")
		busy.Spec.NodeName = running.Status.NodeName // as kube-scheduler binds it
		f.Create(busy)
	}

	more := pendingPods(f, "default", "more", 1, "3", "1Gi", nil)[0]
	var note string
	f.Eventually("the pod is told that the pool's limits leave no room", func() bool {
		for _, n := range eventNotes(f, more.Name, provisioning.ReasonNoPoolFits) {
			note = n
			return true
		}
		return false
	})
	if !strings.Contains(note, "NodePool capped: the pool's limits") {
		t.Fatalf("Event %q does not name the pool's limits", note)
	}
	if claims := f.Claims("capped"); len(claims) != 2 {
		t.Fatalf("the pool has %d claims, want its limit of 2", len(claims))
	}
	f.CheckInvariants()
}

// A limit on nvidia.com/gpu stops new claims once their GPUs reach it: three pods of a
// GPU each, on a class of one-GPU instances, under limits of 2 GPUs get two claims; the
// third pod is told the GPU limit leaves no room, and no third claim is made.
func TestAGPULimitStopsNewClaims(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"g4dn.xlarge"}}})
	f.Pool("gpus", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef.Name = "gpu"
		p.Spec.Limits = v1beta1.Limits{fakecloud.ResourceGPU: resource.MustParse("2")}
	})
	pods := pendingPods(f, "default", "train", 3, "1", "1Gi", func(p *corev1.Pod) {
		// Extended resources are not overcommitted: the API server wants the limit too.
		p.Spec.Containers[0].Resources.Requests[fakecloud.ResourceGPU] = resource.MustParse("1")
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{fakecloud.ResourceGPU: resource.MustParse("1")}
	})
	f.Eventually("two claims, one per GPU the limit allows", func() bool { return len(f.Claims("gpus")) == 2 })
	var note string
	f.Eventually("a pod is told that the GPU limit leaves no room", func() bool {
		for _, pod := range pods {
			for _, n := range eventNotes(f, pod.Name, provisioning.ReasonNoPoolFits) {
				note = n
				return true
			}
		}
		return false
	})
	if !strings.Contains(note, "limits.nvidia.com/gpu") {
		t.Fatalf("Event %q does not name the GPU limit", note)
	}
	if claims := f.Claims("gpus"); len(claims) != 2 {
		t.Fatalf("the pool has %d claims, want 2 under a limit of 2 GPUs", len(claims))
	}
	f.CheckInvariants()
}

package provisioning_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
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

package provisioning_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/stack"
)

// Kube-scheduler need not put a pod where provisioning nominated it. Three 1-CPU pods
// start one standby node; before they bind, other pods fill it. Once the grace for
// binding passes, the three wait for capacity again, and provisioning starts the second
// standby node for them, with nobody marking them again.
func TestPodsLeftOffTheirNominatedNodeGetCapacityAgain(t *testing.T) {
	f := stack.NewFixture(t, nil)
	xlargeClass(f)
	f.Pool("web", 2, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef.Name = "xlarge"
		p.Spec.Standby.Max = ptr.To[int32](2)
		p.Spec.Limits = v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("2")} // no refill: only the two standby nodes exist
	})
	f.WaitForPhase("web", 2, v1beta1.PhaseStandby)

	pendingPods(f, "default", "nominated", 3, "1", "1Gi", nil)
	var first v1beta1.NodeClaim
	f.Eventually("one standby node is asked to run", func() bool {
		running := claimsAskedToRun(f, "web")
		if len(running) == 1 {
			first = running[0]
		}
		return len(running) == 1
	})
	first = *f.WaitForClaim(first.Name, v1beta1.PhaseRunning)

	// Other pods take the node's room, as kube-scheduler may place them.
	for i := range 3 {
		pod := newPod("default", fmt.Sprintf("other-%d", i), "1", "1Gi")
		pod.Spec.NodeName = first.Status.NodeName
		f.Create(pod)
	}
	f.Eventually("the second standby node is asked to run for the pods left out", func() bool {
		return len(claimsAskedToRun(f, "web")) == 2
	})
	if took := time.Since(first.Status.LastPhaseChangeTime.Time); took < state.BindGrace {
		t.Fatalf("the pods waited for capacity again %s after their node ran, before the %s grace", took, state.BindGrace)
	}
	f.CheckInvariants()
}

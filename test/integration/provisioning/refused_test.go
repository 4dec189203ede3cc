package provisioning_test

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// A standby node the cloud refuses to start (its zone is out of capacity) goes back to
// standby, and the pods it was started for are planned again in the next batch: here
// onto a cold launch in another zone, within seconds. On main before the fix, the
// lifecycle retried the start without end and the pods stayed nominated to the claim for
// the 15-minute nomination TTL.
func TestPodsOfARefusedStartAreProvisionedAgain(t *testing.T) {
	f := stack.NewFixture(t, nil)
	xlargeClass(f)
	f.Pool("web", 1, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef.Name = "xlarge"
		p.Spec.Standby.Max = ptr.To[int32](1)
	})
	warm := f.WaitForPhase("web", 1, v1beta1.PhaseStandby)[0]
	f.Cloud.SetFaults(fakecloud.Faults{InsufficientCapacity: []fakecloud.Offering{{Zone: warm.Status.Zone}}})

	pendingPods(f, "default", "web", 3, "1", "1Gi", nil)
	var refusedAt time.Time
	f.Eventually("the cloud refuses the start and the claim is back in standby", func() bool {
		claim := f.Claim(warm.Name)
		started := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionStarted)
		if started == nil || started.Status != metav1.ConditionFalse || claim.Spec.DesiredState != v1beta1.DesiredStandby {
			return false
		}
		refusedAt = started.LastTransitionTime.Time
		return true
	})
	var cold v1beta1.NodeClaim
	f.Eventually("a claim is launched for the pods", func() bool {
		for _, c := range claimsAskedToRun(f, "web") {
			if c.Name != warm.Name {
				cold = c
				return true
			}
		}
		return false
	})
	if took := cold.CreationTimestamp.Sub(refusedAt); took > 10*time.Second {
		t.Fatalf("the pods waited %s after the refused start for another claim, want seconds", took)
	}
	if slices.ContainsFunc(cold.Spec.Requirements, func(r v1beta1.NodeSelectorRequirement) bool {
		return r.Key == "topology.kubernetes.io/zone" && slices.Equal(r.Values, []string{warm.Status.Zone})
	}) {
		t.Fatalf("the launch asks for the zone out of capacity: %v", cold.Spec.Requirements)
	}
	f.WaitForClaim(cold.Name, v1beta1.PhaseRunning)
	// The pool may remove the refused claim as one above its warm pool's ceiling (it
	// warmed a replacement when the claim was asked to run); it must not run it again.
	refused := &v1beta1.NodeClaim{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(&warm), refused); err == nil && refused.Spec.DesiredState != v1beta1.DesiredStandby {
		t.Fatalf("the refused claim was asked to run again within its back-off: %s", refused.Spec.DesiredState)
	}
	f.CheckInvariants()
}

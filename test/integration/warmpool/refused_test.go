package warmpool_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// consistently polls cond every 50 ms for d and fails the test the first time it does
// not hold: for what must not happen during a while, such as a retry.
func (f *fixture) consistently(what string, d time.Duration, cond func() bool) {
	f.T.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); <-tick.C {
		if !cond() {
			f.T.Fatalf("%s stopped holding", what)
		}
	}
}

// A standby node asked to run whose start the cloud refuses for lack of capacity goes
// back to standby and says why, before anyone can see it stand by again; it is not
// started again until it is asked again.
func TestStartRefusedForCapacityReturnsTheClaimToStandby(t *testing.T) {
	f := newFixture(t, nil)
	// A ceiling of 2 keeps the claim when it stands by again beside the replacement the
	// pool warms when it is asked to run.
	f.Pool("refused", 1, func(p *v1beta1.NodePool) { p.Spec.Standby.Max = ptr.To[int32](2) })
	claim := f.WaitForPhase("refused", 1, v1beta1.PhaseStandby)[0]
	f.Cloud.SetFaults(fakecloud.Faults{InsufficientCapacity: []fakecloud.Offering{{InstanceType: claim.Status.InstanceType, Zone: claim.Status.Zone}}})
	versions := f.ClaimVersions(claim.Name)
	startsBefore := f.Cloud.Calls()[cloudprovider.OpStart]
	f.SetDesired(claim.Name, v1beta1.DesiredRunning)

	refused := func(c *v1beta1.NodeClaim) bool {
		started := meta.FindStatusCondition(c.Status.Conditions, v1beta1.ConditionStarted)
		return started != nil && started.Status == metav1.ConditionFalse && started.Reason == string(cloudprovider.CodeInsufficientCapacity)
	}
	f.Eventually("the claim stands by again, saying why", func() bool {
		c := f.Claim(claim.Name)
		return c.Spec.DesiredState == v1beta1.DesiredStandby && c.Status.Phase == v1beta1.PhaseStandby && refused(c)
	})
	f.WaitForEvent(claim.Name, string(cloudprovider.CodeInsufficientCapacity))
	askedToRun := false
	for _, v := range versions() {
		askedToRun = askedToRun || v.Spec.DesiredState == v1beta1.DesiredRunning
		if askedToRun && v.Spec.DesiredState == v1beta1.DesiredStandby && !refused(&v) {
			t.Fatalf("version %s of the claim stands by again without its Started condition False: %+v", v.ResourceVersion, v.Status.Conditions)
		}
	}
	f.consistently("at most two start calls for the refused claim", 2*time.Second, func() bool {
		return f.Cloud.Calls()[cloudprovider.OpStart]-startsBefore <= 2 && f.Claim(claim.Name).Spec.DesiredState == v1beta1.DesiredStandby
	})
	if i, _ := f.Instance(claim.Status.InstanceID); i.State != cloudprovider.StateStopped {
		t.Errorf("the refused instance is %s, want stopped", i.State)
	}

	// Capacity is back and the claim is asked again: it starts, and says so.
	f.Cloud.SetFaults(fakecloud.Faults{})
	f.SetDesired(claim.Name, v1beta1.DesiredRunning)
	running := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
	if started := meta.FindStatusCondition(running.Status.Conditions, v1beta1.ConditionStarted); started == nil || started.Status != metav1.ConditionTrue {
		t.Errorf("Started = %+v after a start the cloud accepted, want True", started)
	}
	f.assertRunning(running)
	f.CheckInvariants()
}

package warmpool_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/test/stack"
)

// waitRemoved waits until the claim is gone and returns when that was seen.
func (f *fixture) waitRemoved(name string) time.Time {
	f.T.Helper()
	f.Eventually("claim "+name+" is removed", func() bool {
		return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: name}, &v1beta1.NodeClaim{}))
	})
	return time.Now()
}

// assertRemovedFor checks what a claim removed for reason leaves: the Event, one more
// in the terminations metric than before (its value when the test began: runs of a test
// in one process share the metric), and a terminated instance.
func (f *fixture) assertRemovedFor(claim *v1beta1.NodeClaim, reason string, before float64) {
	f.T.Helper()
	f.WaitForEvent(claim.Name, reason)
	if n := terminations(f.T, claim.Spec.NodePool, reason) - before; n != 1 {
		f.T.Errorf("stratos_nodeclaims_terminated_total{nodepool=%q,reason=%q} rose by %v, want 1", claim.Spec.NodePool, reason, n)
	}
	if i, _ := f.Instance(claim.Status.InstanceID); i.State != cloudprovider.StateShuttingDown && i.State != cloudprovider.StateTerminated {
		f.T.Errorf("the removed claim's instance %s is %q", claim.Status.InstanceID, i.State)
	}
}

// terminations reads stratos_nodeclaims_terminated_total for a pool and reason; pools
// are named after their test, so other tests in the process do not count.
func terminations(t *testing.T, pool, reason string) float64 {
	t.Helper()
	return stack.Counter(t, "stratos_nodeclaims_terminated_total", map[string]string{"nodepool": pool, "reason": reason})
}

// A claim asked to run whose Node keeps a startup taint no agent removes is removed once
// the initialization timeout has passed since its Node registered.
func TestClaimThatNeverInitialisesIsRemoved(t *testing.T) {
	const timeout = 3 * time.Second
	f := newFixture(t, func(o *nodeclaim.Options) { o.InitializationTimeout = timeout })
	before := terminations(t, "never-init", nodeclaim.ReasonInitializationTimeout)
	pool := f.Pool("never-init", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.StartupTaints = []v1beta1.Taint{{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}}
	})
	// Provisioning's cold launch for pending pods.
	claim := claimtemplate.NewClaim(pool, v1beta1.DesiredRunning)
	f.Create(claim)

	wedged := f.WaitForClaim(claim.Name, v1beta1.PhaseInitializing)
	goneAt := f.waitRemoved(claim.Name)
	if waited := goneAt.Sub(trueSince(t, wedged, v1beta1.ConditionRegistered)); waited < timeout {
		t.Errorf("the claim was removed %s after its Node registered, before the %s timeout", waited, timeout)
	}
	f.assertRemovedFor(wedged, nodeclaim.ReasonInitializationTimeout, before)
	f.CheckInvariants()
}

// A standby node whose start never brings its Node back to Ready is removed after the
// start timeout, and the pool warms a fresh one.
func TestStartedNodeThatNeverComesBackIsRemoved(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) { o.StartTimeout = 3 * time.Second })
	before := terminations(t, "no-resume", nodeclaim.ReasonStartTimeout)
	// The Node is Ready an hour after a start: never, for this test.
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "no-resume"},
		Spec: v1beta1.FakeNodeClassSpec{Physics: &v1beta1.FakePhysics{ResumeDelay: v1beta1.NewDuration(time.Hour)}}})
	f.Pool("no-resume", 1, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef.Name = "no-resume"
		p.Spec.Standby.Max = ptr.To[int32](2)
	})
	claim := f.WaitForPhase("no-resume", 1, v1beta1.PhaseStandby)[0]
	f.SetDesired(claim.Name, v1beta1.DesiredRunning)

	starting := f.WaitForClaim(claim.Name, v1beta1.PhaseStarting)
	goneAt := f.waitRemoved(claim.Name)
	if waited := goneAt.Sub(starting.Status.LastPhaseChangeTime.Time); waited < 3*time.Second {
		t.Errorf("the claim was removed %s after its start, before the timeout", waited)
	}
	f.assertRemovedFor(starting, nodeclaim.ReasonStartTimeout, before)
	fresh := f.WaitForPhase("no-resume", 1, v1beta1.PhaseStandby)[0]
	if fresh.Name == claim.Name {
		t.Fatal("the broken claim is still the pool's")
	}
	f.CheckInvariants()
}

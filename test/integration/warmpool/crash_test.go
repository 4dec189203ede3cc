package warmpool_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// instancesOf returns the live instances the cloud holds for a claim.
func (f *fixture) instancesOf(claim string) []string {
	var ids []string
	for _, i := range f.Cloud.Instances() {
		if i.Tags[v1beta1.TagNodeClaim] == claim && i.State != "terminated" && i.State != "shutting-down" {
			ids = append(ids, i.ID)
		}
	}
	return ids
}

// The operator dies after the cloud launched an instance but before the claim recorded
// it. The next operator launches again with the same token and adopts the same instance.
func TestCrashBetweenLaunchAndRecordAdoptsTheInstance(t *testing.T) {
	f := newFixture(t, nil)
	f.Op.Stop()
	crashed := make(chan struct{})
	var fired atomic.Bool
	crashing := f.Opts
	crashing.Intercept = func(c client.WithWatch) client.WithWatch {
		return interceptor.NewClient(c, interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				if claim, ok := obj.(*v1beta1.NodeClaim); ok && sub == "status" && claim.Status.InstanceID != "" && fired.CompareAndSwap(false, true) {
					close(crashed)
					return errors.New("the operator died before it recorded the launch")
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		})
	}
	f.Op = stack.StartOperator(t, f.Env, f.Cloud, crashing)
	f.Pool("crash", 1, nil)
	<-crashed
	f.Op.Stop()

	claim := f.Claims("crash")[0]
	if claim.Status.InstanceID != "" {
		t.Fatalf("the crash was meant to lose the launch, but the claim recorded %s", claim.Status.InstanceID)
	}
	launched := f.instancesOf(claim.Name)
	if len(launched) != 1 {
		t.Fatalf("the cloud holds %d instances for the claim before the restart", len(launched))
	}

	f.Op = stack.StartOperator(t, f.Env, f.Cloud, f.Opts)
	adopted := f.WaitForPhase("crash", 1, v1beta1.PhaseStandby)[0]
	if adopted.Name != claim.Name || adopted.Status.InstanceID != launched[0] {
		t.Fatalf("after the restart claim %s owns %s; want claim %s to own %s", adopted.Name, adopted.Status.InstanceID, claim.Name, launched[0])
	}
	if ids := f.instancesOf(claim.Name); len(ids) != 1 {
		t.Fatalf("the claim has %d live instances: %v", len(ids), ids)
	}
	f.CheckInvariants()
}

// The operator dies after the launch was recorded and before the Node registered; the
// next one carries on with the same instance.
func TestCrashBeforeRegistrationCarriesOn(t *testing.T) {
	f := newFixture(t, nil)
	// A slow boot (4 minutes, 6 s at the test's time scale) leaves time to restart.
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "slow-boot"},
		Spec: v1beta1.FakeNodeClassSpec{Physics: &v1beta1.FakePhysics{BootDelay: v1beta1.NewDuration(4 * time.Minute)}}})
	f.Pool("restart", 2, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "slow-boot" })
	f.Eventually("both claims recorded their launch", func() bool {
		claims := f.Claims("restart")
		if len(claims) != 2 {
			return false
		}
		for _, c := range claims {
			if c.Status.Phase != v1beta1.PhaseRegistering {
				return false
			}
		}
		return true
	})
	before := map[string]string{}
	for _, c := range f.Claims("restart") {
		before[c.Name] = c.Status.InstanceID
	}
	f.RestartOperator(f.Opts)

	for _, c := range f.WaitForPhase("restart", 2, v1beta1.PhaseStandby) {
		if before[c.Name] != c.Status.InstanceID {
			t.Errorf("claim %s moved from instance %s to %s", c.Name, before[c.Name], c.Status.InstanceID)
		}
	}
	if n := len(f.Cloud.Instances()); n != 2 {
		t.Fatalf("the cloud holds %d instances for 2 claims", n)
	}
	f.CheckInvariants()
}

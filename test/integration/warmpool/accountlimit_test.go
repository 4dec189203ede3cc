package warmpool_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// standardVcpuLimit is EC2's On-Demand vCPU limit of the standard families reached: the
// fake cloud's c, m and r types are of that group, its g4dn types are not.
var standardVcpuLimit = fakecloud.AccountLimit{Limit: "VcpuLimitExceeded", TypePrefixes: []string{"c", "m", "r"}, CapacityType: v1beta1.CapacityTypeOnDemand}

// limitRefusals counts the launches that reach the cloud, and those an account limit refuses.
type limitRefusals struct {
	cloudprovider.API
	launches, refused atomic.Int32
}

func (c *limitRefusals) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	c.launches.Add(1)
	instance, err := c.API.Create(ctx, req)
	var cloudErr *cloudprovider.Error
	if errors.As(err, &cloudErr) && cloudErr.Limit != "" {
		c.refused.Add(1)
	}
	return instance, err
}

func (c *limitRefusals) calls() int32          { return c.launches.Load() }
func (c *limitRefusals) refusedByLimit() int32 { return c.refused.Load() }

func quickLaunchRetries(o *nodeclaim.Options) {
	o.LaunchBackoffBase = 100 * time.Millisecond
	o.LaunchBackoffMax = 400 * time.Millisecond
}

// A launch refused by an account limit falls through to an offering the limit does not
// cover: the standard families' vCPU limit is reached, so the standby node is a G
// instance, the only other type its class offers, and the claim told of the limit on its
// way there.
//
// On main before the change, the refusal was a plain QuotaExceeded that marked nothing:
// every retry asked for the cheapest type again, c5.large, and the claim never launched.
func TestALaunchUnderAnAccountLimitFallsThroughToOtherFamilies(t *testing.T) {
	f := newFixture(t, quickLaunchRetries)
	f.Cloud.SetFaults(fakecloud.Faults{AccountLimits: []fakecloud.AccountLimit{standardVcpuLimit}})
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "two-groups"},
		Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"c5.large", "g4dn.xlarge"}}})
	f.Pool("fall-through", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "two-groups" })

	claim := f.WaitForPhase("fall-through", 1, v1beta1.PhaseStandby)[0]
	if claim.Status.InstanceType != "g4dn.xlarge" {
		t.Fatalf("the standby node is a %s; the standard families' vCPU limit leaves only g4dn.xlarge", claim.Status.InstanceType)
	}
	// Events are written in the background: wait for the claim's.
	var note string
	f.Eventually("the claim has an AccountLimitExceeded Event", func() bool {
		var ok bool
		note, ok = f.EventNote(claim.Name, v1beta1.ReasonAccountLimitExceeded)
		return ok
	})
	if !strings.Contains(note, "VcpuLimitExceeded") {
		t.Errorf("the claim's AccountLimitExceeded Event says %q; want it to name VcpuLimitExceeded", note)
	}
	f.CheckInvariants()
}

// A claim that only offerings under an account limit can serve waits, saying which limit,
// and so does its pool; it is not removed and made again. The limit refuses it once: its
// offering stays marked unavailable for 3 minutes (longer than the test), so the retries
// meanwhile stop short of the limit (on EC2, before any CreateFleet).
//
// On main before the change, the claim and the pool said QuotaExceeded and LaunchFailed
// without naming the limit.
func TestALaunchOnlyAnAccountLimitCoversWaitsNamingIt(t *testing.T) {
	f := newFixture(t, quickLaunchRetries)
	f.Cloud.SetFaults(fakecloud.Faults{AccountLimits: []fakecloud.AccountLimit{standardVcpuLimit}})
	creates := &limitRefusals{API: f.Cloud}
	f.Op.Stop()
	f.Op = stack.StartOperator(t, f.Env, creates, f.Opts)
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "standard-only"},
		Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"r5.xlarge"}}})
	pool := f.Pool("limited", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "standard-only" })

	var first v1beta1.NodeClaim
	f.Eventually("the claim waits naming the limit", func() bool {
		claims := f.Claims("limited")
		if len(claims) != 1 {
			return false
		}
		first = claims[0]
		launched := meta.FindStatusCondition(first.Status.Conditions, v1beta1.ConditionLaunched)
		return launched != nil && launched.Status == metav1.ConditionFalse && launched.Reason == v1beta1.ReasonAccountLimitExceeded &&
			strings.Contains(launched.Message, "VcpuLimitExceeded")
	})
	f.Eventually("the claim has an AccountLimitExceeded Event", func() bool { return f.EventSeen(first.Name, v1beta1.ReasonAccountLimitExceeded) })
	f.Eventually("the pool says which limit keeps it from its target", func() bool {
		got := &v1beta1.NodePool{}
		_ = f.Env.Client.Get(f.Ctx, clientKey(pool), got)
		degraded := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionDegraded)
		return degraded != nil && degraded.Status == metav1.ConditionTrue && degraded.Reason == v1beta1.ReasonAccountLimitExceeded &&
			strings.Contains(degraded.Message, "VcpuLimitExceeded")
	})
	// Events are written in the background: wait for the pool's.
	f.Eventually("the pool has an AccountLimitExceeded Event", func() bool { return f.EventSeen(pool.Name, v1beta1.ReasonAccountLimitExceeded) })
	// Retries run every 0.4 s by now; wait for several more before counting the
	// refusals by the limit.
	before := creates.calls()
	f.Eventually("the claim retried several times", func() bool { return creates.calls() >= before+5 })
	if n := creates.refusedByLimit(); n != 1 {
		t.Errorf("the limit refused %d launches; want one, the retries since stopping short of it", n)
	}
	if claims := f.Claims("limited"); len(claims) != 1 || claims[0].Name != first.Name {
		t.Fatalf("the pool has claims %v; want the one that waits, %s", claims, first.Name)
	}
	if n := len(f.Cloud.Instances()); n != 0 {
		t.Fatalf("%d instances launched under the limit", n)
	}
}

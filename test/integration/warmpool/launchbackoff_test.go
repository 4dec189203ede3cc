package warmpool_test

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/test/stack"
)

// timedCreates records when each launch reaches the cloud.
type timedCreates struct {
	cloudprovider.API
	mu    sync.Mutex
	times []time.Time
}

func (c *timedCreates) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	c.mu.Lock()
	c.times = append(c.times, time.Now())
	c.mu.Unlock()
	return c.API.Create(ctx, req)
}

func (c *timedCreates) recorded() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.times...)
}

// A launch that keeps failing for a reason that may pass (here the cloud's internal
// error) is retried after 0.2 s, 0.4 s, 0.8 s and then every 0.8 s at the cap, each
// with some jitter added, instead of at every poll; once the cloud answers again the
// claim launches. Only lower bounds are checked: a loaded machine makes every wait
// longer, never shorter. The claim's own status write wakes it right after its first
// failure, which must not launch early either.
//
// On main before the change, every retry came at the poll interval (0.1 s here) and the
// wake-up by the status write retried at once: the second launch followed the first
// by 0.1 s or less.
func TestFailingLaunchesBackOff(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) {
		o.LaunchBackoffBase = 200 * time.Millisecond
		o.LaunchBackoffMax = 800 * time.Millisecond
	})
	creates := &timedCreates{API: f.Cloud}
	f.Op.Stop()
	f.Op = stack.StartOperator(t, f.Env, creates, f.Opts)
	class := &v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "failing"},
		Spec: v1beta1.FakeNodeClassSpec{Faults: &v1beta1.FakeFaults{Errors: []v1beta1.FakeOperationFault{
			{Operation: v1beta1.FakeOperation(cloudprovider.OpCreate), Percent: 100, Error: v1beta1.FakeErrorInternal}}}}}
	f.Create(class)
	f.Pool("failing", 1, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "failing" })

	minimum := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 800 * time.Millisecond, 800 * time.Millisecond}
	f.Eventually("six launches failed", func() bool { return len(creates.recorded()) >= len(minimum)+1 })
	times := creates.recorded()
	for n, least := range minimum {
		if gap := times[n+1].Sub(times[n]); gap < least {
			t.Errorf("launch %d came %s after the one before; want at least %s", n+2, gap, least)
		}
	}
	if claims := f.Claims("failing"); len(claims) != 1 {
		t.Fatalf("the pool has %d claims, want the one that keeps retrying", len(claims))
	}

	stack.Patch(f.Fixture, class, func(c *v1beta1.FakeNodeClass) { c.Spec.Faults = nil })
	f.WaitForPhase("failing", 1, v1beta1.PhaseStandby)
}

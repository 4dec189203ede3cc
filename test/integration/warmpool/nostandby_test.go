package warmpool_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/nodeclass"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// warmPoolCondition waits until the pool's status is written for its generation and
// returns its WarmPoolSupported condition, nil when it has none.
func warmPoolCondition(f *stack.Fixture, pool *v1beta1.NodePool, when func(*metav1.Condition) bool) (*v1beta1.NodePool, *metav1.Condition) {
	f.T.Helper()
	var cond *metav1.Condition
	got := &v1beta1.NodePool{}
	f.Eventually("pool "+pool.Name+"'s WarmPoolSupported condition", func() bool {
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pool), got); err != nil || got.Status.ObservedGeneration != got.Generation {
			return false
		}
		cond = meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionWarmPoolSupported)
		return when(cond)
	})
	return got, cond
}

// A pool whose ClusterAPINodeClass cannot stand by keeps no warm pool, whatever its spec
// and its windows ask, and says so in its WarmPoolSupported condition and an Event; once
// the class can, the condition goes and the warm pool is made.
func TestPoolOfAClassThatCannotStandByKeepsNoWarmPool(t *testing.T) {
	t.Parallel()
	f := stack.NewSerialFixtureWith(t, fakecloud.Options{}, func(o *stack.OperatorOptions) {
		o.WrapCloud = stack.CAPIOnFake
	})
	class := f.CAPIClass("metal", v1beta1.ClusterAPIStandbyUnsupported)
	pool := f.Pool("metal", 2, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef = v1beta1.NodeClassReference{Kind: "ClusterAPINodeClass", Name: class.Name}
	})
	refused := func(c *metav1.Condition) bool { return c != nil && c.Status == metav1.ConditionFalse }
	got, cond := warmPoolCondition(f, pool, refused)
	if cond.Reason != nodeclass.ReasonStandbyUnsupported || !strings.Contains(cond.Message, "Metal3Machine.infrastructure.cluster.x-k8s.io") ||
		!strings.Contains(cond.Message, "standby target of 2 is capped to 0") {
		t.Errorf("WarmPoolSupported: %s %q; want %s naming the machine kind and the target", cond.Reason, cond.Message, nodeclass.ReasonStandbyUnsupported)
	}
	if got.Status.StandbyTarget != 0 || len(f.Claims("metal")) != 0 {
		t.Errorf("standby target %d, %d claims; want none", got.Status.StandbyTarget, len(f.Claims("metal")))
	}
	f.WaitForEvent(pool.Name, nodeclass.ReasonStandbyUnsupported)

	// A window asking for standby nodes is capped too.
	stack.Patch(f, pool, func(p *v1beta1.NodePool) {
		p.Spec.Windows = []v1beta1.Window{{Name: "always", MinStandby: ptr.To[int32](3)}}
	})
	got, cond = warmPoolCondition(f, pool, func(c *metav1.Condition) bool { return refused(c) && strings.Contains(c.Message, "(window always)") })
	if !strings.Contains(cond.Message, "standby target of 3 (window always) is capped to 0") || got.Status.StandbyTarget != 0 || len(f.Claims("metal")) != 0 {
		t.Errorf("with the window: %q, standby target %d, %d claims; want the window's 3 capped to 0 and no claim", cond.Message, got.Status.StandbyTarget, len(f.Claims("metal")))
	}

	// The class's infrastructure can stand by after all: the warm pool is made.
	f.SetCAPIStandby(class, v1beta1.ClusterAPIStandbySupported)
	warmPoolCondition(f, pool, func(c *metav1.Condition) bool { return c == nil })
	f.Eventually("the window's 3 standby claims are made", func() bool { return len(f.Claims("metal")) == 3 })
}

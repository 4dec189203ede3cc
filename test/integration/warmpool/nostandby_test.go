package warmpool_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/cloudprovider/fake"
	"github.com/stratos-sh/stratos/internal/nodeclass"
	"github.com/stratos-sh/stratos/test/stack"
)

// capiOnFake launches the instances of a ClusterAPINodeClass in the fake cloud, from its
// whole catalogue: the pool's side of a class that cannot stand by is what these tests
// look at, not the Cluster API provider.
type capiOnFake struct{ cloudprovider.API }

func (c capiOnFake) InstanceTypes(ctx context.Context, class client.Object) ([]*cloudprovider.InstanceType, error) {
	if _, ok := class.(*v1beta1.ClusterAPINodeClass); ok {
		class = nil
	}
	return c.API.InstanceTypes(ctx, class)
}

func (c capiOnFake) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	if _, ok := req.NodeClass.(*v1beta1.ClusterAPINodeClass); ok {
		copied := *req
		copied.NodeClass = nil
		req = &copied
	}
	return c.API.Create(ctx, req)
}

// capiClass creates a ClusterAPINodeClass and writes the status its controller would:
// Ready for its generation, with standby as given.
func capiClass(f *stack.Fixture, name, standby string) *v1beta1.ClusterAPINodeClass {
	f.T.Helper()
	template := v1beta1.ClusterAPITemplateReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "workers"}
	class := &v1beta1.ClusterAPINodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.ClusterAPINodeClassSpec{
		Cluster:                   v1beta1.ClusterAPIClusterReference{Namespace: "default", Name: "metal"},
		BootstrapTemplateRef:      v1beta1.ClusterAPITemplateReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Name: "workers"},
		InfrastructureTemplateRef: template,
		Version:                   "v1.37.2",
		InstanceTypes: []v1beta1.ClusterAPIInstanceType{{Name: "m5.large", Zones: []string{"zone-a"}, PricePerHour: "0.1",
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")}}},
	}}
	f.Create(class)
	setStandby(f, class, standby)
	return class
}

// setStandby writes the class's status as its controller would.
func setStandby(f *stack.Fixture, class *v1beta1.ClusterAPINodeClass, standby string) {
	f.T.Helper()
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(class), class); err != nil {
		f.T.Fatal(err)
	}
	base := class.DeepCopy()
	class.Status.ObservedGeneration, class.Status.Standby = class.Generation, standby
	meta.SetStatusCondition(&class.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: "Resolved", Message: "resolved", ObservedGeneration: class.Generation})
	if err := f.Env.Client.Status().Patch(f.Ctx, class, client.MergeFrom(base)); err != nil {
		f.T.Fatal(err)
	}
}

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
	f := stack.NewSerialFixtureWith(t, fake.Options{}, func(o *stack.OperatorOptions) {
		o.WrapCloud = func(api cloudprovider.API) cloudprovider.API { return capiOnFake{api} }
	})
	class := capiClass(f, "metal", v1beta1.ClusterAPIStandbyUnsupported)
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
	if _, ok := f.EventNote(pool.Name, nodeclass.ReasonStandbyUnsupported); !ok {
		t.Error("no StandbyUnsupported Event on the pool")
	}

	// A window asking for standby nodes is capped too.
	stack.Patch(f, pool, func(p *v1beta1.NodePool) {
		p.Spec.Windows = []v1beta1.Window{{Name: "always", MinStandby: ptr.To[int32](3)}}
	})
	got, cond = warmPoolCondition(f, pool, func(c *metav1.Condition) bool { return refused(c) && strings.Contains(c.Message, "(window always)") })
	if !strings.Contains(cond.Message, "standby target of 3 (window always) is capped to 0") || got.Status.StandbyTarget != 0 || len(f.Claims("metal")) != 0 {
		t.Errorf("with the window: %q, standby target %d, %d claims; want the window's 3 capped to 0 and no claim", cond.Message, got.Status.StandbyTarget, len(f.Claims("metal")))
	}

	// The class's infrastructure can stand by after all: the warm pool is made.
	setStandby(f, class, v1beta1.ClusterAPIStandbySupported)
	warmPoolCondition(f, pool, func(c *metav1.Condition) bool { return c == nil })
	f.Eventually("the window's 3 standby claims are made", func() bool { return len(f.Claims("metal")) == 3 })
}

package warmpool_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/test/stack"
)

// A pool with standby.min 3 ends with three warmed, stopped instances whose Nodes are
// cordoned and tainted; lowering the target to 1 removes two of them.
func TestPoolKeepsItsStandbyTarget(t *testing.T) {
	f := newFixture(t, nil)
	pool := f.Pool("web", 3, nil)

	claims := f.WaitForPhase("web", 3, v1beta1.PhaseStandby)
	for _, c := range claims {
		instance, ok := f.Instance(c.Status.InstanceID)
		if !ok || instance.State != cloudprovider.StateStopped {
			t.Errorf("claim %s: instance %s is %q, want stopped", c.Name, c.Status.InstanceID, instance.State)
		}
		node := f.Node(c.Status.NodeName)
		if !node.Spec.Unschedulable || !hasTaint(node, v1beta1.TaintStandbyKey) {
			t.Errorf("standby Node %s: unschedulable %v, taints %v; want cordoned and tainted", node.Name, node.Spec.Unschedulable, node.Spec.Taints)
		}
		if node.Labels[v1beta1.LabelNodePool] != "web" || node.Labels[v1beta1.LabelState] != "Standby" || node.Labels["example.com/team"] != "web" {
			t.Errorf("Node %s labels %v", node.Name, node.Labels)
		}
		for _, cond := range []string{v1beta1.ConditionLaunched, v1beta1.ConditionRegistered, v1beta1.ConditionInitialized, v1beta1.ConditionWarmedUp} {
			if !meta.IsStatusConditionTrue(c.Status.Conditions, cond) {
				t.Errorf("claim %s: condition %s is not true: %+v", c.Name, cond, c.Status.Conditions)
			}
		}
	}
	f.Eventually("the pool reports its target met", func() bool {
		got := &v1beta1.NodePool{}
		_ = f.Env.Client.Get(f.Ctx, clientKey(pool), got)
		return got.Status.Nodes.Standby == 3 && got.Status.StandbyTarget == 3 && meta.IsStatusConditionTrue(got.Status.Conditions, v1beta1.ConditionReady) &&
			meta.IsStatusConditionFalse(got.Status.Conditions, v1beta1.ConditionDegraded) && got.Status.ObservedGeneration == got.Generation
	})

	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) { p.Spec.Standby.Min = 1 })
	remaining := f.WaitForPhase("web", 1, v1beta1.PhaseStandby)
	for _, c := range claims {
		if c.Name == remaining[0].Name {
			continue
		}
		if instance, _ := f.Instance(c.Status.InstanceID); instance.State != cloudprovider.StateShuttingDown && instance.State != cloudprovider.StateTerminated {
			t.Errorf("removed claim %s left instance %s %s", c.Name, instance.ID, instance.State)
		}
	}
	if remaining[0].Name != claims[2].Name && remaining[0].CreationTimestamp.Before(&claims[2].CreationTimestamp) {
		t.Errorf("the newest claim should stay; kept %s", remaining[0].Name)
	}
	f.CheckInvariants()
}

// A node limit below the target is respected and reported.
func TestPoolRespectsAndReportsItsNodeLimit(t *testing.T) {
	f := newFixture(t, nil)
	pool := f.Pool("capped", 5, func(p *v1beta1.NodePool) { p.Spec.Limits = v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("2")} })

	f.WaitForPhase("capped", 2, v1beta1.PhaseStandby)
	f.Eventually("the pool reports the limit", func() bool {
		got := &v1beta1.NodePool{}
		_ = f.Env.Client.Get(f.Ctx, clientKey(pool), got)
		degraded := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionDegraded)
		ready := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionReady)
		return got.Status.Nodes.Standby == 2 && degraded != nil && degraded.Status == "True" && degraded.Reason == nodepool.ReasonLimitReached &&
			ready != nil && ready.Status == "False" && ready.Reason == nodepool.ReasonLimitReached
	})
	if n := len(f.Claims("capped")); n != 2 {
		t.Fatalf("the pool has %d claims with limits.nodes 2", n)
	}

	// Raising the limit clears the condition and lets the pool reach its target.
	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) { p.Spec.Limits[v1beta1.LimitNodes] = resource.MustParse("10") })
	f.WaitForPhase("capped", 5, v1beta1.PhaseStandby)
	f.Eventually("the Degraded condition clears", func() bool {
		got := &v1beta1.NodePool{}
		_ = f.Env.Client.Get(f.Ctx, clientKey(pool), got)
		return meta.IsStatusConditionFalse(got.Status.Conditions, v1beta1.ConditionDegraded) && meta.IsStatusConditionTrue(got.Status.Conditions, v1beta1.ConditionReady)
	})
	f.CheckInvariants()
}

// A pool whose node class is missing reports it and creates nothing; the class's
// creation brings the pool to its target.
func TestPoolWaitsForItsNodeClass(t *testing.T) {
	f := newFixture(t, nil)
	pool := f.Pool("classless", 2, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "later" })
	f.Eventually("the pool reports the missing class", func() bool {
		got := &v1beta1.NodePool{}
		_ = f.Env.Client.Get(f.Ctx, clientKey(pool), got)
		degraded := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionDegraded)
		return degraded != nil && degraded.Reason == nodepool.ReasonNodeClassNotFound
	})
	if n := len(f.Claims("classless")); n != 0 {
		t.Fatalf("the pool created %d claims without a node class", n)
	}
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "later"}})
	f.WaitForPhase("classless", 2, v1beta1.PhaseStandby)
	f.CheckInvariants()
}

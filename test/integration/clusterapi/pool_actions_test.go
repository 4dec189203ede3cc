package clusterapi_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simprovider"
	"github.com/stratos-sh/stratos/test/stack"
)

// The kill switch on a pool of Machines drains its nodes and deletes their Machines, and
// CAPI their bootstrap configs and infrastructure machines.
func TestTheKillSwitchDeletesThePoolsMachines(t *testing.T) {
	f := newFixture(t)
	pool(f, "capi-kill")
	pendingPod(f, "capi-kill")
	claim := f.WaitForPhase("capi-kill", 1, v1beta1.PhaseRunning)[0]
	key := client.ObjectKeyFromObject(machineOf(f, &claim))

	p := &v1beta1.NodePool{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: "capi-kill"}, p); err != nil {
		t.Fatal(err)
	}
	base := p.DeepCopy()
	p.Spec.KillSwitch = true
	if err := f.Env.Client.Patch(f.Ctx, p, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the pool's claims, its Machine and the Machine's SimMachine are gone", func() bool {
		return len(f.Claims("capi-kill")) == 0 && !exists(f, key, &clusterv1.Machine{}) && !exists(f, key, &v1alpha1.SimMachine{})
	})
}

// A class pointed at a new infrastructure template drifts the Machines made from the old
// one: the claim is marked Drifted, a replacement Machine is made from the new template,
// and the old Machine goes once its node is drained. CAPI's templates are immutable; a
// new template is how a machine changes.
func TestANewTemplateDriftsAndReplacesTheMachine(t *testing.T) {
	f := newFixture(t)
	shared := &v1beta1.ClusterAPINodeClass{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: simClass}, shared); err != nil {
		t.Fatal(err)
	}
	class := &v1beta1.ClusterAPINodeClass{ObjectMeta: metav1.ObjectMeta{Name: "capi-drift"}, Spec: *shared.Spec.DeepCopy()}
	f.Create(class)
	t.Cleanup(func() { _ = f.Env.Client.Delete(f.Ctx, class) })
	f.Eventually("the class is Ready", func() bool { return classReady(f, class) })
	f.Pool("capi-drift", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.NodeClassRef = v1beta1.NodeClassReference{Kind: "ClusterAPINodeClass", Name: class.Name}
		p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/pool": "capi-drift"}
		p.Spec.Standby.Warmup = v1beta1.Warmup{}
	})
	t.Cleanup(func() { removePool(f, "capi-drift") })
	pod := pendingPod(f, "capi-drift")
	claim := f.WaitForPhase("capi-drift", 1, v1beta1.PhaseRunning)[0]
	old := client.ObjectKeyFromObject(machineOf(f, &claim))
	// The pod runs on the node, so that the node is not empty: it is replaced, not
	// consolidated away.
	bind(f, pod, claim.Status.NodeName)

	templates, err := simprovider.CreateTemplates(f.Ctx, c, simprovider.TemplateOptions{Namespace: simNamespace, Name: "drifted"})
	if err != nil {
		t.Fatal(err)
	}
	base := class.DeepCopy()
	class.Spec.InfrastructureTemplateRef = templates.Infrastructure
	if err := f.Env.Client.Patch(f.Ctx, class, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}

	f.Eventually("the claim is marked Drifted", func() bool {
		current := &v1beta1.NodeClaim{}
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(&claim), current); err != nil {
			return true // Already replaced and gone.
		}
		return meta.IsStatusConditionTrue(current.Status.Conditions, v1beta1.ConditionDrifted)
	})
	// The replacement may itself go once the pod, a bare one that nothing recreates, is
	// evicted from the old node; so it is looked for at every poll, not at the end.
	replaced := false
	f.Eventually("a Machine made from the new template replaced the old one", func() bool {
		for _, m := range machinesOf(f, "capi-drift") {
			infra := &v1alpha1.SimMachine{}
			if exists(f, client.ObjectKeyFromObject(&m), infra) && infra.Annotations[clusterv1.TemplateClonedFromNameAnnotation] == templates.Infrastructure.Name {
				replaced = true
			}
		}
		return replaced && !exists(f, old, &clusterv1.Machine{})
	})
}

// classReady reports whether the class controller found the class's current spec Ready.
func classReady(f *stack.Fixture, class *v1beta1.ClusterAPINodeClass) bool {
	f.T.Helper()
	current := &v1beta1.ClusterAPINodeClass{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(class), current); err != nil {
		f.T.Fatal(err)
	}
	ready := meta.FindStatusCondition(current.Status.Conditions, v1beta1.ConditionReady)
	return ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == current.Generation
}

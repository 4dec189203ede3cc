package warmpool_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/test/stack"
)

// A pool whose kubelet keeps back more memory than any instance type has makes no
// standby claim and launches nothing: it says so with a Degraded condition and a
// Warning Event, where it used to launch the cheapest type for standby claims, which
// ask for no room. Once the reservation fits, the warm pool fills.
func TestAPoolWhoseKubeletLeavesNoTypeRoomSaysSoAndLaunchesNothing(t *testing.T) {
	f := newFixture(t, nil)
	reserve := func(memory string) *v1beta1.KubeletConfiguration {
		return &v1beta1.KubeletConfiguration{KubeReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)}}
	}
	pool := f.Pool("reserved", 2, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.Kubelet = reserve("16Ti") })

	var degraded *metav1.Condition
	f.Eventually("the pool says no instance type fits", func() bool {
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			t.Fatal(err)
		}
		degraded = meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded)
		return degraded != nil && degraded.Reason == nodepool.ReasonNoInstanceTypeFits
	})
	if !strings.Contains(degraded.Message, "spec.template.spec.kubelet leaves no CPU or memory for pods") || !strings.Contains(degraded.Message, "keep back cpu") {
		t.Errorf("Degraded says %q, want what the kubelet keeps back", degraded.Message)
	}
	if ready := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionReady); ready == nil || ready.Reason != nodepool.ReasonNoInstanceTypeFits {
		t.Errorf("Ready = %+v, want it held back by %s", ready, nodepool.ReasonNoInstanceTypeFits)
	}
	f.Eventually("a Warning Event on the pool", func() bool { return f.EventSeen("reserved", nodepool.ReasonNoInstanceTypeFits) })
	// The condition is written by the pass that would have made the claims: none was.
	if claims := f.Claims("reserved"); len(claims) != 0 {
		t.Fatalf("the pool made %d claims", len(claims))
	}
	if creates := f.Cloud.Calls()[cloudprovider.OpCreate]; creates != 0 || len(f.Cloud.Instances()) != 0 {
		t.Fatalf("the cloud was asked for %d launches and holds %d instances, want none", creates, len(f.Cloud.Instances()))
	}

	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.Kubelet = reserve("1Gi") })
	f.WaitForPhase("reserved", 2, v1beta1.PhaseStandby)
	f.Eventually("the pool is no longer degraded", func() bool {
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			t.Fatal(err)
		}
		return meta.IsStatusConditionFalse(pool.Status.Conditions, v1beta1.ConditionDegraded)
	})
	f.CheckInvariants()
}

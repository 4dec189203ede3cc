package warmpool_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// zoneCounts counts claims by the zone of their instance.
func zoneCounts(claims []v1beta1.NodeClaim) map[string]int {
	counts := map[string]int{}
	for _, c := range claims {
		counts[c.Status.Zone]++
	}
	return counts
}

// A warm pool stands by in every zone the pool allows, evenly, on capacity that can stop
// and start, even where spot is cheaper.
func TestTheWarmPoolSpreadsAcrossZonesOnDemand(t *testing.T) {
	f := newFixture(t, nil)
	f.Pool("spread", 6, nil)
	claims := f.WaitForPhase("spread", 6, v1beta1.PhaseStandby)
	counts := zoneCounts(claims)
	for _, zone := range fakecloud.DefaultZones() {
		if counts[zone] != 2 {
			t.Fatalf("standby nodes by zone %v, want 2 in each of %v", counts, fakecloud.DefaultZones())
		}
	}
	for _, c := range claims {
		if c.Status.CapacityType != v1beta1.CapacityTypeOnDemand {
			t.Fatalf("standby claim %s is %s", c.Name, c.Status.CapacityType)
		}
	}
	f.CheckInvariants()
}

// spec.standby says what a standby node looks like: the types it may be and the pod it
// must hold. Each standby node is the cheapest type that meets both.
func TestTheWarmPoolKeepsTheShapeItIsGiven(t *testing.T) {
	f := newFixture(t, nil)
	f.Pool("shaped", 3, func(p *v1beta1.NodePool) {
		p.Spec.Standby.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}
		p.Spec.Standby.Resources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	})
	claims := f.WaitForPhase("shaped", 3, v1beta1.PhaseStandby)
	// In the fake catalogue the cheapest amd64 type with room for 6 CPUs and 8 GiB is
	// c5.2xlarge (8 vCPU, 16 GiB); arm64's c6g.2xlarge is cheaper but not allowed.
	for _, c := range claims {
		if c.Status.InstanceType != "c5.2xlarge" {
			t.Fatalf("standby claim %s is a %s, want c5.2xlarge", c.Name, c.Status.InstanceType)
		}
	}
	if counts := zoneCounts(claims); len(counts) != 3 {
		t.Fatalf("standby nodes by zone %v, want one in each", counts)
	}
}

// A pool that allows only spot keeps no warm pool, and its conditions say why.
func TestASpotOnlyPoolSaysItsWarmPoolCannotBeKept(t *testing.T) {
	f := newFixture(t, nil)
	pool := f.Pool("spot", 2, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeSpot}}}
	})
	f.Eventually("the pool says its warm pool cannot be kept", func() bool {
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			t.Fatal(err)
		}
		degraded := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded)
		return degraded != nil && degraded.Reason == nodepool.ReasonNoStandbyOffering && strings.Contains(degraded.Message, "spot is for cold launches only")
	})
	if claims := f.Claims("spot"); len(claims) != 0 {
		t.Fatalf("the spot-only pool made %d claims", len(claims))
	}
	f.Eventually("a Warning Event on the pool", func() bool { return f.EventSeen("spot", nodepool.ReasonNoStandbyOffering) })
}

// A new spec.standby shape replaces the warm pool's nodes, each old one once a new one
// stands by in its place.
func TestANewStandbyShapeReplacesTheWarmPool(t *testing.T) {
	f := newFixture(t, nil)
	pool := f.Pool("reshaped", 2, func(p *v1beta1.NodePool) {
		p.Spec.Standby.Resources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6")}
	})
	old := f.WaitForPhase("reshaped", 2, v1beta1.PhaseStandby)
	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) {
		p.Spec.Standby.Resources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	})
	f.Eventually("the old standby nodes are replaced by ones of the new shape", func() bool {
		claims := f.Claims("reshaped")
		if len(claims) != 2 {
			return false
		}
		for _, c := range claims {
			if c.Name == old[0].Name || c.Name == old[1].Name || c.Status.Phase != v1beta1.PhaseStandby {
				return false
			}
		}
		return true
	})
	for _, c := range old {
		f.WaitForEvent(c.Name, string(v1beta1.DisruptionDrifted))
	}
	f.CheckInvariants()
}

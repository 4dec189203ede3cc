package schedulinginput

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/internal/state"
)

// Provisioning asks the standby claim that runs soonest to take a pod
// (internal/standby): a claim warming up before a stopped one, both before one still
// coming up, and that before one stopping, whatever their prices; the pool's running
// minimum starts them in the same order. Each pair gives the later claim the cheaper
// instance and the first place in the input, so that neither would pick the right one.
func TestProvisioningAsksTheStandbyClaimThatRunsSoonest(t *testing.T) {
	instanceType := func(name string, price float64) *cloudprovider.InstanceType {
		return &cloudprovider.InstanceType{Name: name, Architecture: "amd64",
			Capacity:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("29")},
			Offerings: []cloudprovider.Offering{{Zone: "z1", CapacityType: v1beta1.CapacityTypeOnDemand, PricePerHour: price, Available: true}},
		}
	}
	types := catalog{"cheap": instanceType("cheap", 0.05), "dear": instanceType("dear", 0.5)}
	claim := func(name, instanceType string, phase v1beta1.NodeClaimPhase) scheduling.Claim {
		c, ok := schedulingClaim(state.ClaimState{Claim: &v1beta1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       v1beta1.NodeClaimSpec{NodePool: "web", DesiredState: v1beta1.DesiredStandby},
			Status:     v1beta1.NodeClaimStatus{Phase: phase, InstanceType: instanceType, Zone: "z1", CapacityType: v1beta1.CapacityTypeOnDemand},
		}}, types)
		if !ok || !c.Standby {
			t.Fatalf("a claim in phase %q asked to stand by is standby capacity", phase)
		}
		return c
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
	}}}}
	phases := []v1beta1.NodeClaimPhase{v1beta1.PhaseWarmingUp, v1beta1.PhaseStandby, v1beta1.PhaseLaunching, v1beta1.PhaseStopping}
	for i, first := range phases[:len(phases)-1] {
		for _, later := range phases[i+1:] {
			result := scheduling.Solve(scheduling.Input{Pods: []*corev1.Pod{pod}, Claims: []scheduling.Claim{
				claim("later", "cheap", later), claim("first", "dear", first),
			}})
			var started []string
			for _, start := range result.Starts {
				started = append(started, start.Claim)
			}
			if len(started) != 1 || started[0] != "first" {
				t.Errorf("%s and %s: started %v, want the %s claim (first)", first, later, started, first)
			}
		}
	}
}

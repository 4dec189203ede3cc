package schedulinginput

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/state"
)

// A claim whose instance type is known carries the type's instance labels in the
// simulation, whether its Node has registered or not, so that pods selecting on them
// can be placed on it; what the Node says wins.
func TestClaimsCarryTheInstanceLabelsOfTheirType(t *testing.T) {
	it := &cloudprovider.InstanceType{Name: "m5.xlarge", Architecture: "amd64", Attributes: cloudprovider.InstanceFacts{
		Name: "m5.xlarge", VCPUs: 4, MemoryMiB: 16384, Hypervisor: "nitro", NetworkBandwidthMbps: 1250}.Attributes()}
	types := catalog{it.Name: it}
	launched := func(phase v1beta1.NodeClaimPhase, desired v1beta1.DesiredState) *v1beta1.NodeClaim {
		return &v1beta1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{v1beta1.LabelNodePool: "web"}},
			Spec:       v1beta1.NodeClaimSpec{NodePool: "web", DesiredState: desired},
			Status:     v1beta1.NodeClaimStatus{Phase: phase, InstanceType: it.Name, Zone: "z1", CapacityType: v1beta1.CapacityTypeOnDemand},
		}
	}

	inFlight, ok := schedulingClaim(state.ClaimState{Claim: launched(v1beta1.PhaseRegistering, v1beta1.DesiredRunning)}, types)
	if !ok {
		t.Fatal("a registering claim asked to run is in flight")
	}
	for k, v := range it.Attributes {
		if got, has := inFlight.Labels[k]; !has || got != v {
			t.Errorf("in-flight claim: %s = %q, want %q", k, got, v)
		}
	}
	if inFlight.Labels[corev1.LabelInstanceTypeStable] != "m5.xlarge" || inFlight.Labels[v1beta1.LabelNodePool] != "web" {
		t.Errorf("in-flight claim lost its other labels: %v", inFlight.Labels)
	}

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{v1beta1.LabelInstanceCPU: "3"}}}
	standby, ok := schedulingClaim(state.ClaimState{Claim: launched(v1beta1.PhaseStandby, v1beta1.DesiredStandby), Node: node}, types)
	if !ok || !standby.Standby {
		t.Fatal("a standby claim is a standby candidate")
	}
	if standby.Labels[v1beta1.LabelInstanceFamily] != "m5" || standby.Labels[v1beta1.LabelInstanceCPU] != "3" {
		t.Errorf("standby claim with a Node: labels %v, want the type's family and the Node's cpu", standby.Labels)
	}
}

// A Ready Node still carrying the taints its stop left — the node lifecycle controller's
// and the cloud controller manager's, which they lift at their next pass — counts as the
// capacity it is about to be; its own taints stay.
func TestAReadyNodeCountsWithoutTheTaintsItsStopLeft(t *testing.T) {
	own := corev1.Taint{Key: "example.com/dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{
		{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
		{Key: "node.cloudprovider.kubernetes.io/shutdown", Effect: corev1.TaintEffectNoSchedule},
		own,
	}}}
	got := withoutLaggingTaints(node).Spec.Taints
	if len(got) != 1 || !got[0].MatchTaint(&own) {
		t.Fatalf("taints left: %v, want only %v", got, own)
	}
	if len(node.Spec.Taints) != 4 {
		t.Fatalf("the Node itself was changed: %v", node.Spec.Taints)
	}
}

package schedulinginput

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/state"
)

// A claim launched but not registered offers pods its type as its own kubelet
// configuration makes it: 2 pods a node, 1 CPU kept back.
func TestLaunchedClaimsOfferWhatTheirKubeletLeaves(t *testing.T) {
	it := &cloudprovider.InstanceType{Name: "m5.large", Architecture: "amd64", Capacity: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("29"),
	}}
	claim := &v1beta1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec: v1beta1.NodeClaimSpec{NodePool: "web", DesiredState: v1beta1.DesiredStandby, Kubelet: &v1beta1.KubeletConfiguration{
			MaxPods: ptr.To[int32](2), SystemReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}},
		Status: v1beta1.NodeClaimStatus{Phase: v1beta1.PhaseStandby, InstanceType: it.Name, Zone: "z1", CapacityType: v1beta1.CapacityTypeOnDemand},
	}
	c, ok := schedulingClaim(state.ClaimState{Claim: claim}, catalog{it.Name: it})
	if !ok {
		t.Fatal("a standby claim is a standby candidate")
	}
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("2")}
	if !quota.Equals(c.Allocatable, want) {
		t.Fatalf("allocatable %v, want %v", c.Allocatable, want)
	}
	// Once registered, the Node's own figures count (copied into the claim's status).
	claim.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3")}
	if c, _ := schedulingClaim(state.ClaimState{Claim: claim}, catalog{it.Name: it}); !quota.Equals(c.Allocatable, claim.Status.Allocatable) {
		t.Fatalf("allocatable %v, want the status's %v", c.Allocatable, claim.Status.Allocatable)
	}
}

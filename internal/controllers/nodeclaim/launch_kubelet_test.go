package nodeclaim

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The cloud boots the node's kubelet with the claim's configuration (a changed pool
// drifts the claim rather than changing its launch).
func TestCreateRequestCarriesTheClaimsKubeletConfiguration(t *testing.T) {
	claim := testClaim(v1beta1.DesiredStandby)
	claim.Spec.Kubelet = &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](8), EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "5%"}}
	req := buildCreateRequest(claim, &v1beta1.FakeNodeClass{}, "prod")
	if !equality.Semantic.DeepEqual(req.Kubelet, claim.Spec.Kubelet) {
		t.Fatalf("create request kubelet %+v, want the claim's %+v", req.Kubelet, claim.Spec.Kubelet)
	}
	if req := buildCreateRequest(testClaim(v1beta1.DesiredRunning), &v1beta1.FakeNodeClass{}, "prod"); req.Kubelet != nil {
		t.Errorf("a claim without a kubelet configuration launched with %+v", req.Kubelet)
	}
}

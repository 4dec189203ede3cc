package schedulinginput

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

func TestLaunchClaimNarrowsThePoolTemplateToTheLaunch(t *testing.T) {
	pool := &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: v1beta1.NodePoolSpec{Template: v1beta1.NodeClaimTemplate{
		Spec: v1beta1.NodeClaimTemplateSpec{Requirements: []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}},
	}}}
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}
	claim := LaunchClaim(pool, scheduling.Launch{Pool: "web", InstanceTypes: []string{"c6g.large", "m6g.large"}, Zones: []string{"fake-1b"}, Requests: requests})

	if claim.Spec.DesiredState != v1beta1.DesiredRunning || claim.Spec.NodePool != "web" || claim.GenerateName != "web-" {
		t.Fatalf("claim %+v is not a running claim of pool web", claim.Spec)
	}
	keys := map[string][]string{}
	for _, r := range claim.Spec.Requirements {
		keys[r.Key] = r.Values
	}
	if len(keys[corev1.LabelInstanceTypeStable]) != 2 || keys[corev1.LabelTopologyZone][0] != "fake-1b" || keys[corev1.LabelArchStable][0] != "arm64" {
		t.Fatalf("requirements %v: want the pool's, the launch's types and its zone", claim.Spec.Requirements)
	}
	if _, narrowed := keys[v1beta1.LabelCapacityType]; narrowed {
		t.Fatal("a launch that did not narrow capacity types must not narrow the claim")
	}
	if !claim.Spec.Resources.Requests.Cpu().Equal(resource.MustParse("1500m")) {
		t.Fatalf("requests %v, want the launch's", claim.Spec.Resources.Requests)
	}
}

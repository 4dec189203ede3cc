package nodeclaim

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestCreateRequestOfAStandbyClaim(t *testing.T) {
	claim := testClaim(v1beta1.DesiredStandby)
	claim.UID = "uid-1"
	claim.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}
	class := &v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}

	req := buildCreateRequest(claim, class, "prod")
	if req.ClientToken != "uid-1" {
		t.Errorf("the client token must be the claim's UID, got %q", req.ClientToken)
	}
	if req.Tags[v1beta1.TagCluster] != "prod" || req.Tags[v1beta1.TagNodePool] != "web" || req.Tags[v1beta1.TagNodeClaim] != "web-abc" {
		t.Errorf("ownership tags %v", req.Tags)
	}
	if req.Labels[v1beta1.LabelNodeClaim] != "web-abc" || req.Labels["team"] != "a" {
		t.Errorf("labels %v", req.Labels)
	}
	keys := []string{}
	for _, taint := range req.Taints {
		keys = append(keys, taint.Key)
	}
	if !slices.Equal(keys, []string{"dedicated", "cni-not-ready", v1beta1.TaintStandbyKey}) {
		t.Errorf("taints %v: want the claim's, its startup taints and the standby taint", keys)
	}
	if len(req.Requirements) != 1 || req.NodeClass != class {
		t.Errorf("requirements %v class %v", req.Requirements, req.NodeClass)
	}
}

func TestCreateRequestOfARunningClaimRegistersParkedWithoutWarmup(t *testing.T) {
	req := buildCreateRequest(testClaim(v1beta1.DesiredRunning), &v1beta1.FakeNodeClass{}, "prod")
	if !slices.ContainsFunc(req.Taints, func(t corev1.Taint) bool { return t.Key == v1beta1.TaintStandbyKey }) {
		t.Fatal("a claim meant to run must register parked, so that no pod lands before its own have their room")
	}
}

func TestNodeToClaimUsesTheClaimLabel(t *testing.T) {
	r := &Lifecycle{}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1beta1.LabelNodeClaim: "web-abc"}}}
	if reqs := r.nodeToClaim(context.Background(), node); len(reqs) != 1 || reqs[0].Name != "web-abc" {
		t.Fatalf("requests %v", reqs)
	}
	if reqs := r.nodeToClaim(context.Background(), &corev1.Node{}); len(reqs) != 0 {
		t.Fatalf("a Node without the label maps to %v", reqs)
	}
}

package aws

import (
	"maps"
	"testing"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

func TestLaunchTags(t *testing.T) {
	req := &cloudprovider.CreateRequest{Tags: map[string]string{
		v1alpha1.TagCluster: "someone-else", v1alpha1.TagNodePool: "web", v1alpha1.TagNodeClaim: "web-abc12",
	}}
	class := &v1alpha1.AWSNodeClass{Spec: v1alpha1.AWSNodeClassSpec{Tags: map[string]string{"team": "platform"}}}
	want := map[string]string{
		v1alpha1.TagCluster: "prod", v1alpha1.TagNodePool: "web", v1alpha1.TagNodeClaim: "web-abc12",
		"kubernetes.io/cluster/prod": "owned", "Name": "web-abc12", "team": "platform",
	}
	if got := launchTags(req, class, "prod"); !maps.Equal(got, want) {
		t.Fatalf("launchTags = %v, want %v", got, want)
	}
	// A node class that names its instances keeps its name.
	class.Spec.Tags["Name"] = "web-node"
	want["Name"] = "web-node"
	if got := launchTags(req, class, "prod"); !maps.Equal(got, want) {
		t.Fatalf("launchTags = %v, want %v", got, want)
	}
	if class.Spec.Tags[v1alpha1.TagCluster] != "" {
		t.Fatal("launchTags changed the node class's tags")
	}
}

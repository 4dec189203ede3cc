package aws

import (
	"maps"
	"testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

func TestLaunchTags(t *testing.T) {
	req := &cloudprovider.CreateRequest{Tags: map[string]string{
		v1beta1.TagCluster: "someone-else", v1beta1.TagNodePool: "web", v1beta1.TagNodeClaim: "web-abc12",
	}}
	class := &v1beta1.EC2NodeClass{Spec: v1beta1.EC2NodeClassSpec{Tags: map[string]string{"team": "platform"}}}
	want := map[string]string{
		v1beta1.TagCluster: "prod", v1beta1.TagNodePool: "web", v1beta1.TagNodeClaim: "web-abc12",
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
	if class.Spec.Tags[v1beta1.TagCluster] != "" {
		t.Fatal("launchTags changed the node class's tags")
	}
}

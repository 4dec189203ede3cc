package aws

import (
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// tagName is the tag the EC2 console shows as an instance's name.
const tagName = "Name"

// kubernetesClusterTag is the tag by which Kubernetes components (the cloud controller
// manager, the load balancer controller) know an instance belongs to the cluster.
func kubernetesClusterTag(cluster string) string { return "kubernetes.io/cluster/" + cluster }

// launchTags are the tags of a launched instance, its volumes, its network interfaces
// and its fleet: the node class's own tags, then the request's ownership tags
// (stratos.sh/cluster, -nodepool, -nodeclaim), with the cluster tag always this
// provider's, kubernetes.io/cluster/<cluster>: owned, and Name: the claim's name unless
// the node class names its instances itself.
func launchTags(req *cloudprovider.CreateRequest, class *v1beta1.EC2NodeClass, cluster string) map[string]string {
	tags := maps.Clone(class.Spec.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, req.Tags)
	tags[v1beta1.TagCluster] = cluster
	tags[kubernetesClusterTag(cluster)] = "owned"
	if _, named := tags[tagName]; !named && req.Tags[v1beta1.TagNodeClaim] != "" {
		tags[tagName] = req.Tags[v1beta1.TagNodeClaim]
	}
	return tags
}

// ec2Tags converts tags to EC2's form, sorted by key so that requests (and the launch
// template names hashed from them) are the same for the same tags.
func ec2Tags(tags map[string]string) []types.Tag {
	out := make([]types.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

// tagMap converts EC2 tags to a map.
func tagMap(tags []types.Tag) map[string]string {
	out := make(map[string]string, len(tags))
	for _, t := range tags {
		out[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

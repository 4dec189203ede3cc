package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// describeBatch is the most instance IDs one DescribeInstances call filters on: EC2
// takes at most 200 values per filter.
const describeBatch = 200

// instancePageSize is the MaxResults of DescribeInstances calls, EC2's largest page.
// Tests lower it to go past one page with a few instances.
var instancePageSize int32 = 1000

// liveStates are the instance states ListInstances returns: all but terminated.
var liveStates = []string{
	string(types.InstanceStateNamePending), string(types.InstanceStateNameRunning),
	string(types.InstanceStateNameStopping), string(types.InstanceStateNameStopped),
	string(types.InstanceStateNameShuttingDown),
}

// DescribeInstances returns the instances among ids, in any state (a terminated one
// while EC2 still shows it); those that do not carry the cluster's tag have NotOwned
// set, so that an instance whose tag was removed or changed, or every instance after a
// change of cluster name, is not taken for one EC2 has forgotten. The IDs go in an
// instance-id filter rather than as InstanceIds, because EC2 fails a whole call that
// names one unknown ID but filters on unknown IDs without complaint; an unknown ID is
// absent from the map.
func (c *Cloud) DescribeInstances(ctx context.Context, ids []string) (map[string]*cloudprovider.Instance, error) {
	found, err := c.describeByID(ctx, cloudprovider.OpGet, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*cloudprovider.Instance, len(found))
	for id, inst := range found {
		out[id] = toInstance(inst)
		out[id].NotOwned = !c.owns(inst)
	}
	return out, nil
}

// ListInstances returns the cluster's instances that carry every given tag and are not
// terminated, by ID; the cluster's tag is always required.
func (c *Cloud) ListInstances(ctx context.Context, tags map[string]string) ([]*cloudprovider.Instance, error) {
	if err := c.checkClusterName(); err != nil {
		return nil, err
	}
	want := maps.Clone(tags)
	if want == nil {
		want = map[string]string{}
	}
	if v, ok := want[v1beta1.TagCluster]; ok && v != c.opts.ClusterName {
		return nil, nil // another cluster's instances are none of ours
	}
	want[v1beta1.TagCluster] = c.opts.ClusterName
	filters := append(tagFilters(want), types.Filter{Name: aws.String("instance-state-name"), Values: liveStates})
	var list []*cloudprovider.Instance
	err := c.describeEach(ctx, filters, func(inst types.Instance) {
		list = append(list, toInstance(inst))
	})
	if err != nil {
		return nil, classify(cloudprovider.OpList, "", err)
	}
	slices.SortFunc(list, func(a, b *cloudprovider.Instance) int { return strings.Compare(a.ID, b.ID) })
	return list, nil
}

// describeByID describes the instances among ids, whoever owns them, in batches of
// describeBatch IDs, each paginated. Describing is not scoped by tag in IAM, so an
// instance without the cluster's tag is described too: callers tell it with owns.
func (c *Cloud) describeByID(ctx context.Context, op string, ids []string) (map[string]types.Instance, error) {
	if err := c.checkClusterName(); err != nil {
		return nil, err
	}
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	found := make(map[string]types.Instance, len(ids))
	for batch := range slices.Chunk(ids, describeBatch) {
		filters := []types.Filter{{Name: aws.String("instance-id"), Values: batch}}
		err := c.describeEach(ctx, filters, func(inst types.Instance) {
			found[aws.ToString(inst.InstanceId)] = inst
		})
		if err != nil {
			return nil, classify(op, "", err)
		}
	}
	return found, nil
}

// owns reports whether the instance carries the cluster's tag.
func (c *Cloud) owns(inst types.Instance) bool {
	return tagMap(inst.Tags)[v1beta1.TagCluster] == c.opts.ClusterName
}

// describeEach calls visit with every instance the filters match, page by page.
func (c *Cloud) describeEach(ctx context.Context, filters []types.Filter, visit func(types.Instance)) error {
	pages := ec2.NewDescribeInstancesPaginator(c.clients.EC2, &ec2.DescribeInstancesInput{
		Filters:    filters,
		MaxResults: aws.Int32(instancePageSize),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, r := range page.Reservations {
			for _, inst := range r.Instances {
				visit(inst)
			}
		}
	}
	return nil
}

// checkClusterName refuses to work without a cluster name: the ownership tag is what
// tells Stratos's instances from others.
func (c *Cloud) checkClusterName() error {
	if c.opts.ClusterName == "" {
		return errors.New("the EC2 provider needs a cluster name: its instances are told from others by the stratos.sh/cluster tag")
	}
	return nil
}

// toInstance converts an EC2 instance.
func toInstance(inst types.Instance) *cloudprovider.Instance {
	id := aws.ToString(inst.InstanceId)
	var zone string
	if inst.Placement != nil {
		zone = aws.ToString(inst.Placement.AvailabilityZone)
	}
	var state cloudprovider.InstanceState
	if inst.State != nil {
		state = cloudprovider.InstanceState(inst.State.Name)
	}
	var profile string
	if inst.IamInstanceProfile != nil {
		// arn:aws:iam::ACCOUNT:instance-profile/PATH/NAME: the name is the last part.
		arn := aws.ToString(inst.IamInstanceProfile.Arn)
		profile = arn[strings.LastIndex(arn, "/")+1:]
	}
	return &cloudprovider.Instance{
		ID:              id,
		ProviderID:      providerID(zone, id),
		Type:            string(inst.InstanceType),
		ImageID:         aws.ToString(inst.ImageId),
		InstanceProfile: profile,
		EndedAtLaunch:   endedAtLaunch(inst),
		Zone:            zone,
		CapacityType:    capacityType(inst.InstanceLifecycle),
		Architecture:    kubernetesArchitecture(inst.Architecture),
		State:           state,
		Tags:            tagMap(inst.Tags),
		LaunchTime:      aws.ToTime(inst.LaunchTime),
	}
}

// providerID is the Node's spec.providerID the kubelet sets on EC2.
func providerID(zone, id string) string {
	return fmt.Sprintf("aws:///%s/%s", zone, id)
}

// capacityType is spot for a spot instance and on-demand for any other.
func capacityType(lifecycle types.InstanceLifecycleType) string {
	if lifecycle == types.InstanceLifecycleTypeSpot {
		return v1beta1.CapacityTypeSpot
	}
	return v1beta1.CapacityTypeOnDemand
}

// kubernetesArchitecture names an EC2 architecture as kubernetes.io/arch does.
func kubernetesArchitecture(arch types.ArchitectureValues) string {
	switch arch {
	case types.ArchitectureValuesX8664:
		return "amd64"
	case types.ArchitectureValuesArm64:
		return "arm64"
	default:
		return string(arch)
	}
}

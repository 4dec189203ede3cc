package ec2machines

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// describeInstances lists every instance tagged with the cluster, page by page.
func (m *Machines) describeInstances(ctx context.Context) ([]ec2types.Instance, error) {
	pages := ec2.NewDescribeInstancesPaginator(m.opts.EC2, &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:" + v1beta1.TagCluster), Values: []string{m.opts.ClusterName}}},
	})
	var all []ec2types.Instance
	for pages.HasMorePages() {
		m.count("DescribeInstances")
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeInstances: %w", err)
		}
		for _, r := range page.Reservations {
			all = append(all, r.Instances...)
		}
	}
	slices.SortFunc(all, func(a, b ec2types.Instance) int {
		return strings.Compare(aws.ToString(a.InstanceId), aws.ToString(b.InstanceId))
	})
	return all, nil
}

// admit reads what the kubelets of new instances need: the user data they register
// with and the shape of their type under the kubelet configuration of that user data.
// An instance whose user data cannot be read now is left for the next poll; one whose
// user data is wrong gets a kubelet that never registers, and a problem.
func (m *Machines) admit(ctx context.Context, fresh []ec2types.Instance) ([]*machine, error) {
	if len(fresh) == 0 {
		return nil, nil
	}
	if err := m.describeShapes(ctx, fresh); err != nil {
		return nil, err
	}
	var admitted []*machine
	var errs []error
	for _, inst := range fresh {
		id := aws.ToString(inst.InstanceId)
		m.count("DescribeInstanceAttribute")
		out, err := m.opts.EC2.DescribeInstanceAttribute(ctx, &ec2.DescribeInstanceAttributeInput{
			InstanceId: inst.InstanceId, Attribute: ec2types.InstanceAttributeNameUserData,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("DescribeInstanceAttribute userData of %s: %w", id, err))
			continue
		}
		mc := &machine{
			id:         id,
			nodeName:   aws.ToString(inst.PrivateDnsName),
			privateIP:  aws.ToString(inst.PrivateIpAddress),
			zone:       zone(inst),
			arch:       kubernetesArch(inst.Architecture),
			providerID: providerID(inst),
			// A new instance's disk holds no container image: pods ask for theirs.
			images: physics.NewImageStore(id, m.opts.Physics, m.opts.TimeScale, nil),
		}
		m.mu.Lock()
		mc.shape = m.shapes[string(inst.InstanceType)]
		m.mu.Unlock()
		var userData string
		if out.UserData != nil {
			userData = aws.ToString(out.UserData.Value)
		}
		mc.registration, err = ParseUserData(userData)
		if mc.shape != nil {
			// The kubelet reports its type's shape under the configuration it booted with.
			mc.shape = configured(mc.shape, mc.registration.Kubelet)
		}
		switch {
		case err != nil:
			m.problem("instance %s: its kubelet cannot start: %v", id, err)
			mc.broken = true
		case mc.nodeName == "":
			m.problem("instance %s has no private DNS name to name its Node by", id)
			mc.broken = true
		case mc.shape == nil:
			m.problem("instance %s: EC2 does not describe its type %s", id, inst.InstanceType)
			mc.broken = true
		}
		admitted = append(admitted, mc)
	}
	return admitted, errors.Join(errs...)
}

// describeShapes describes the instance types of the instances not described yet.
func (m *Machines) describeShapes(ctx context.Context, instances []ec2types.Instance) error {
	m.mu.Lock()
	wanted := map[ec2types.InstanceType]bool{}
	for _, inst := range instances {
		if _, ok := m.shapes[string(inst.InstanceType)]; !ok {
			wanted[inst.InstanceType] = true
		}
	}
	m.mu.Unlock()
	if len(wanted) == 0 {
		return nil
	}
	pages := ec2.NewDescribeInstanceTypesPaginator(m.opts.EC2, &ec2.DescribeInstanceTypesInput{InstanceTypes: slices.Collect(maps.Keys(wanted))})
	for pages.HasMorePages() {
		m.count("DescribeInstanceTypes")
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("DescribeInstanceTypes: %w", err)
		}
		for _, info := range page.InstanceTypes {
			shape, err := machineShape(info)
			if err != nil {
				return err
			}
			m.mu.Lock()
			m.shapes[shape.Name] = shape
			m.mu.Unlock()
		}
	}
	return nil
}

// snapshot is an instance as the invariants see it.
func snapshot(inst ec2types.Instance) cloudprovider.Instance {
	capacityType := v1beta1.CapacityTypeOnDemand
	if inst.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
		capacityType = v1beta1.CapacityTypeSpot
	}
	var state cloudprovider.InstanceState
	if inst.State != nil {
		state = cloudprovider.InstanceState(inst.State.Name)
	}
	return cloudprovider.Instance{
		ID:           aws.ToString(inst.InstanceId),
		ProviderID:   providerID(inst),
		Type:         string(inst.InstanceType),
		ImageID:      aws.ToString(inst.ImageId),
		Zone:         zone(inst),
		CapacityType: capacityType,
		Architecture: kubernetesArch(inst.Architecture),
		State:        state,
		Tags:         tags(inst),
		LaunchTime:   aws.ToTime(inst.LaunchTime),
	}
}

// providerID is the kubelet's provider ID on EC2.
func providerID(inst ec2types.Instance) string {
	return fmt.Sprintf("aws:///%s/%s", zone(inst), aws.ToString(inst.InstanceId))
}

func tags(inst ec2types.Instance) map[string]string {
	out := make(map[string]string, len(inst.Tags))
	for _, t := range inst.Tags {
		out[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

// kubernetesArch names EC2's architectures as kubernetes.io/arch does.
func kubernetesArch(a ec2types.ArchitectureValues) string {
	switch a {
	case ec2types.ArchitectureValuesArm64, ec2types.ArchitectureValuesArm64Mac:
		return "arm64"
	default:
		return "amd64"
	}
}

func zone(inst ec2types.Instance) string {
	if inst.Placement == nil {
		return ""
	}
	return aws.ToString(inst.Placement.AvailabilityZone)
}

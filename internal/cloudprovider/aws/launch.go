package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Create launches one instance for a claim with an instant EC2 fleet, from the instance
// types of the node class, or returns the one an earlier call for the claim launched.
func (c *Cloud) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	class, err := asEC2NodeClass(req.NodeClass)
	if err != nil {
		return nil, err
	}
	if err := readyToLaunch(class); err != nil {
		return nil, err
	}
	instanceTypes, err := c.InstanceTypes(ctx, class)
	if err != nil {
		return nil, classify(cloudprovider.OpCreate, "", err)
	}
	return c.launch(ctx, req, instanceTypes)
}

// launch launches among instanceTypes. It makes, at most:
//
//   - one DescribeInstances call, for an instance an earlier call launched for the claim;
//   - one CreateLaunchTemplate call when the launch template's content is new;
//   - one CreateFleet call.
//
// The instance is returned as the fleet's answer describes it, without describing it
// again.
func (c *Cloud) launch(ctx context.Context, req *cloudprovider.CreateRequest, instanceTypes []*cloudprovider.InstanceType) (*cloudprovider.Instance, error) {
	class, err := asEC2NodeClass(req.NodeClass)
	if err != nil {
		return nil, err
	}
	if err := c.checkClusterName(); err != nil {
		return nil, err
	}
	if err := readyToLaunch(class); err != nil {
		return nil, err
	}
	if earlier, err := c.launchedFor(ctx, req); err != nil || earlier != nil {
		if earlier != nil && earlier.InstanceProfile == "" {
			// EC2 names the profile; an emulator may not, and the class's is the one the
			// earlier attempt launched with unless its role changed in between.
			earlier.InstanceProfile = class.Status.InstanceProfile
		}
		return earlier, err
	}
	plan, err := planLaunch(class, req, instanceTypes)
	if err != nil {
		return nil, err
	}
	data, err := nodeUserData(class, nodeJoin{
		clusterName: c.opts.ClusterName, cluster: c.opts.Cluster,
		labels: sharedLabels(req.Labels), taints: req.Taints, kubelet: req.Kubelet,
	})
	if err != nil {
		return nil, cloudprovider.NewError(cloudprovider.CodeInvalidParameter, cloudprovider.OpCreate, "", "EC2NodeClass %s: %v", class.Name, err)
	}
	lt, err := c.templates.templateFor(class, data)
	if err != nil {
		return nil, err
	}
	if err := c.templates.ensure(ctx, lt); err != nil {
		return nil, err
	}
	tags := launchTags(req, class, c.opts.ClusterName)
	input := fleetInput(plan, lt, tags, req.ClientToken)
	out, err := c.clients.EC2.CreateFleet(ctx, input)
	if err != nil {
		if isTemplateNotFound(awsErrorCode(err)) {
			return nil, c.templateGone(lt)
		}
		refused := classify(cloudprovider.OpCreate, "", err)
		if code := awsErrorCode(err); isAccountLimit(code) {
			// EC2 refused the whole fleet: every type of the plan ran into the limit.
			refused.Limit, refused.Offerings = code, limitCovers(code, nil, plan)
			refused.Message = fmt.Sprintf("%s (%s): %s", code, describeLimit(code, plan.capacityType, nil), refused.Message)
		}
		return nil, refused
	}
	for _, fi := range out.Instances {
		if len(fi.InstanceIds) > 0 {
			instance := fleetInstance(fi, plan, instanceTypes, tags, c.opts.Clock.Now())
			// The launch template names the class's profile; the claim records it, so that
			// the profile outlives the instance and a new one makes the node drift.
			instance.InstanceProfile = class.Status.InstanceProfile
			// Overrides EC2 tried first and found out of capacity are avoided too.
			instance.RefusedOfferings = capacityRefusals(out.Errors, plan)
			return instance, nil
		}
	}
	if slices.ContainsFunc(out.Errors, func(e types.CreateFleetError) bool { return isTemplateNotFound(aws.ToString(e.ErrorCode)) }) {
		return nil, c.templateGone(lt)
	}
	return nil, fleetError(out.Errors, plan)
}

// templateGone forgets a launch template EC2 says does not exist (someone deleted it)
// and returns a retryable error: the next attempt makes it again.
func (c *Cloud) templateGone(lt launchTemplate) error {
	c.templates.forget(lt)
	return cloudprovider.NewError(cloudprovider.CodeInternal, cloudprovider.OpCreate, "",
		"launch template %s was deleted outside Stratos; the next attempt makes it again", lt.name)
}

// asEC2NodeClass is the request's node class.
func asEC2NodeClass(obj client.Object) (*v1beta1.EC2NodeClass, error) {
	class, ok := obj.(*v1beta1.EC2NodeClass)
	if !ok || class == nil {
		return nil, cloudprovider.NewError(cloudprovider.CodeInvalidParameter, cloudprovider.OpCreate, "", "the EC2 provider launches from an EC2NodeClass, not %T", obj)
	}
	return class, nil
}

// readyToLaunch checks that the node class's status holds what a launch needs; its
// resolution fills it, and its Ready condition says what did not resolve.
func readyToLaunch(class *v1beta1.EC2NodeClass) error {
	var missing []string
	if len(class.Status.AMIs) == 0 {
		missing = append(missing, "images")
	}
	if len(class.Status.Subnets) == 0 {
		missing = append(missing, "subnets")
	}
	if len(class.Status.SecurityGroups) == 0 {
		missing = append(missing, "security groups")
	}
	if class.Status.InstanceProfile == "" {
		missing = append(missing, "instance profile")
	}
	if len(missing) > 0 {
		return cloudprovider.NewError(cloudprovider.CodeInvalidParameter, cloudprovider.OpCreate, "",
			"EC2NodeClass %s has no resolved %s yet; its Ready condition says why", class.Name, strings.Join(missing, ", "))
	}
	return nil
}

// launchedFor returns the instance an earlier launch for the claim made, found by the
// claim's tag, unless it is terminated or terminating. EC2's ClientToken makes a repeated
// CreateFleet return the first one's instance; this covers emulators that ignore the
// token (moto), and a retry whose content changed (and so its token, see clientToken).
// It finds only what DescribeInstances shows already: EC2 is eventually consistent, so
// an instance launched a moment ago may not show yet, which the token covers on EC2.
func (c *Cloud) launchedFor(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	claim := req.Tags[v1beta1.TagNodeClaim]
	if claim == "" {
		return nil, nil
	}
	filters := append(tagFilters(map[string]string{v1beta1.TagCluster: c.opts.ClusterName, v1beta1.TagNodeClaim: claim}),
		types.Filter{Name: aws.String("instance-state-name"), Values: []string{
			string(types.InstanceStateNamePending), string(types.InstanceStateNameRunning),
			string(types.InstanceStateNameStopping), string(types.InstanceStateNameStopped),
		}})
	var earliest *cloudprovider.Instance
	err := c.describeEach(ctx, filters, func(inst types.Instance) {
		found := toInstance(inst)
		if earliest == nil || found.LaunchTime.Before(earliest.LaunchTime) {
			earliest = found
		}
	})
	if err != nil {
		return nil, classify(cloudprovider.OpCreate, "", err)
	}
	return earliest, nil
}

// fleetInput is the CreateFleet request of a plan: one instance, from the template with
// the plan's overrides, EC2 choosing the cheapest on-demand override or the spot override
// likeliest to keep its capacity at a low price; the tags on the instance, its volumes,
// its network interfaces and the fleet.
func fleetInput(plan *launchPlan, lt launchTemplate, tags map[string]string, token string) *ec2.CreateFleetInput {
	input := &ec2.CreateFleetInput{
		Type: types.FleetTypeInstant,
		TargetCapacitySpecification: &types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity:       aws.Int32(1),
			DefaultTargetCapacityType: types.DefaultTargetCapacityType(plan.capacityType),
		},
	}
	if plan.capacityType == v1beta1.CapacityTypeSpot {
		input.SpotOptions = &types.SpotOptionsRequest{AllocationStrategy: types.SpotAllocationStrategyPriceCapacityOptimized}
	} else {
		input.OnDemandOptions = &types.OnDemandOptionsRequest{AllocationStrategy: types.FleetOnDemandAllocationStrategyLowestPrice}
	}
	config := types.FleetLaunchTemplateConfigRequest{
		LaunchTemplateSpecification: &types.FleetLaunchTemplateSpecificationRequest{
			LaunchTemplateName: aws.String(lt.name),
			Version:            aws.String("$Latest"),
		},
	}
	for _, o := range plan.overrides {
		config.Overrides = append(config.Overrides, types.FleetLaunchTemplateOverridesRequest{
			InstanceType: types.InstanceType(o.instanceType),
			SubnetId:     aws.String(o.subnet.ID),
			ImageId:      aws.String(o.ami.ID),
		})
	}
	input.LaunchTemplateConfigs = []types.FleetLaunchTemplateConfigRequest{config}
	for _, resource := range []types.ResourceType{types.ResourceTypeInstance, types.ResourceTypeVolume, types.ResourceTypeNetworkInterface, types.ResourceTypeFleet} {
		input.TagSpecifications = append(input.TagSpecifications, types.TagSpecification{ResourceType: resource, Tags: ec2Tags(tags)})
	}
	input.ClientToken = clientToken(token, input)
	return input
}

// clientToken is the idempotency token of a CreateFleet request: the claim's token and a
// digest of the request. EC2 answers a repeated request with the same token and content
// as it answered the first, and refuses one with the same token and a different content
// (IdempotentParameterMismatch); a launch retried after a refusal for lack of capacity
// has different overrides, so it must have a token of its own. EC2 takes 64 characters.
func clientToken(token string, input *ec2.CreateFleetInput) *string {
	if token == "" {
		return nil // the SDK makes one
	}
	content, err := json.Marshal(input)
	if err != nil {
		return aws.String(token)
	}
	digest := sha256.Sum256(content)
	full := token + "-" + hex.EncodeToString(digest[:])
	return aws.String(full[:min(len(full), 64)])
}

// fleetInstance is the launched instance as the fleet's answer describes it.
func fleetInstance(fi types.CreateFleetInstance, plan *launchPlan, instanceTypes []*cloudprovider.InstanceType, tags map[string]string, now time.Time) *cloudprovider.Instance {
	id := fi.InstanceIds[0]
	inst := &cloudprovider.Instance{
		ID:           id,
		Type:         string(fi.InstanceType),
		Zone:         aws.ToString(fi.AvailabilityZone),
		CapacityType: plan.capacityType,
		State:        cloudprovider.StatePending,
		Tags:         tags,
		LaunchTime:   now,
	}
	if fi.Lifecycle != "" {
		inst.CapacityType = capacityType(types.InstanceLifecycleType(fi.Lifecycle))
	}
	if lto := fi.LaunchTemplateAndOverrides; lto != nil && lto.Overrides != nil {
		inst.ImageID = aws.ToString(lto.Overrides.ImageId)
		if inst.Zone == "" {
			inst.Zone = plan.zoneOfSubnet(aws.ToString(lto.Overrides.SubnetId))
		}
		if inst.Zone == "" {
			inst.Zone = aws.ToString(lto.Overrides.AvailabilityZone)
		}
	}
	if inst.Zone == "" {
		inst.Zone = plan.zoneOfSubnet(aws.ToString(fi.SubnetId))
	}
	for _, t := range instanceTypes {
		if t.Name == inst.Type {
			inst.Architecture = t.Architecture
		}
	}
	inst.ProviderID = providerID(inst.Zone, id)
	return inst
}

// sharedLabels are the launch's labels without the claim's name: the user data, and so
// the launch template, is then the same for every claim of a pool, and a burst of
// launches makes one template, not one each. The Node maps back to its claim by its
// provider ID, and the operator sets the claim label at registration.
func sharedLabels(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	delete(out, v1beta1.LabelNodeClaim)
	return out
}

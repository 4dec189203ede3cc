package runner

import (
	"context"
	"fmt"
	"path"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/stratos-sh/stratos/internal/sim/moto"
)

// The simulated AWS account: what the runner creates in moto before the operator starts,
// as a cluster's administrator creates it in a real account (docs/aws.md).
const (
	// awsRegion is the region of the simulated account.
	awsRegion = moto.Region
	// kubernetesVersion is the control plane's minor version, which picks the images
	// behind an AMI alias.
	kubernetesVersion = "1.37"
	// ssmParameterRoot holds the images behind AMI aliases, as /aws/service does on AWS:
	// moto refuses to write under /aws.
	ssmParameterRoot = "/sim/aws/service"
	// discoveryTag marks the subnets and the security group node classes select.
	discoveryTag = "stratos.sh/discovery"
	// karpenterDiscoveryTag marks them too, as Karpenter's getting-started guide tags
	// them: the node classes stratos migrate converts from it keep selecting by it
	// (test/scenarios/karpenter-migrated.yaml).
	karpenterDiscoveryTag = "karpenter.sh/discovery"
	// nodeRole is the IAM role of the nodes.
	nodeRole = "stratos-sim-node"
	// vpcCIDR holds one subnet of 4,096 addresses per zone.
	vpcCIDR = "10.0.0.0/16"
)

// awsZones are the zones of the simulated region, three as the fake region has.
var awsZones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// motoCredentials are the static credentials every client of moto signs with.
var motoCredentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "testing", SecretAccessKey: "testing", Source: "stratos-sim"}, nil
})

// motoEnv is the environment the operator gets on aws: static credentials, and no shared
// configuration or instance metadata for the SDK's default chain to find instead.
var motoEnv = []string{
	"AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing", "AWS_SESSION_TOKEN=",
	"AWS_PROFILE=", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
	"AWS_EC2_METADATA_DISABLED=true", "AWS_REGION=",
}

// prepareAccount creates in moto what a cluster's administrator creates in an AWS
// account for Stratos: a VPC with a subnet per zone and a security group, both tagged
// for discovery; the nodes' IAM role; and the SSM parameters that publish an image per
// architecture behind the al2023 and bottlerocket aliases.
func prepareAccount(ctx context.Context, endpoint, cluster string) error {
	ec2Client := ec2.New(ec2.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: aws.String(endpoint)})
	tags := []ec2types.Tag{
		{Key: aws.String(discoveryTag), Value: aws.String(cluster)},
		{Key: aws.String(karpenterDiscoveryTag), Value: aws.String(cluster)},
		{Key: aws.String("Name"), Value: aws.String("stratos-" + cluster)},
	}
	spec := func(t ec2types.ResourceType) []ec2types.TagSpecification {
		return []ec2types.TagSpecification{{ResourceType: t, Tags: tags}}
	}
	vpc, err := ec2Client.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(vpcCIDR), TagSpecifications: spec(ec2types.ResourceTypeVpc)})
	if err != nil {
		return fmt.Errorf("creating the VPC: %w", err)
	}
	for i, zone := range awsZones {
		if _, err := ec2Client.CreateSubnet(ctx, &ec2.CreateSubnetInput{
			VpcId: vpc.Vpc.VpcId, AvailabilityZone: aws.String(zone), CidrBlock: aws.String(fmt.Sprintf("10.0.%d.0/20", 16*i)),
			TagSpecifications: spec(ec2types.ResourceTypeSubnet),
		}); err != nil {
			return fmt.Errorf("creating the subnet of %s: %w", zone, err)
		}
	}
	if _, err := ec2Client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
		GroupName: aws.String("stratos-" + cluster + "-nodes"), Description: aws.String("Stratos simulator nodes"), VpcId: vpc.Vpc.VpcId,
		TagSpecifications: spec(ec2types.ResourceTypeSecurityGroup),
	}); err != nil {
		return fmt.Errorf("creating the security group: %w", err)
	}

	iamClient := iam.New(iam.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: aws.String(endpoint)})
	if _, err := iamClient.CreateRole(ctx, &iam.CreateRoleInput{
		RoleName:                 aws.String(nodeRole),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
		Tags:                     []iamtypes.Tag{{Key: aws.String(discoveryTag), Value: aws.String(cluster)}},
	}); err != nil {
		return fmt.Errorf("creating the node role: %w", err)
	}

	// The cluster the nodes join, which the operator describes for its endpoint and CA.
	eksClient := eks.New(eks.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: aws.String(endpoint)})
	if _, err := eksClient.CreateCluster(ctx, &eks.CreateClusterInput{
		Name:               aws.String(cluster),
		RoleArn:            aws.String("arn:aws:iam::123456789012:role/stratos-sim-cluster"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{},
	}); err != nil {
		return fmt.Errorf("creating the EKS cluster: %w", err)
	}

	images, err := imagesByArch(ctx, ec2Client)
	if err != nil {
		return err
	}
	ssmClient := ssm.New(ssm.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: aws.String(endpoint)})
	for arch, image := range images {
		for _, name := range []string{
			path.Join(ssmParameterRoot, "eks/optimized-ami", kubernetesVersion, "amazon-linux-2023", arch, "standard/recommended/image_id"),
			path.Join(ssmParameterRoot, "bottlerocket", "aws-k8s-"+kubernetesVersion, arch, "latest/image_id"),
		} {
			if _, err := ssmClient.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String(name), Value: aws.String(image), Type: ssmtypes.ParameterTypeString}); err != nil {
				return fmt.Errorf("writing the SSM parameter %s: %w", name, err)
			}
		}
	}
	return nil
}

// imagesByArch picks one of the Amazon Linux images moto ships per architecture, by
// EC2's name of the architecture (x86_64, arm64), as the SSM parameters name it.
func imagesByArch(ctx context.Context, client *ec2.Client) (map[string]string, error) {
	out, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{
		Owners:  []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"al2022-ami-*"}}},
	})
	if err != nil {
		return nil, fmt.Errorf("describing moto's images: %w", err)
	}
	images := map[string]string{}
	for _, image := range out.Images {
		arch := string(image.Architecture)
		if _, ok := images[arch]; !ok && (arch == "x86_64" || arch == "arm64") {
			images[arch] = aws.ToString(image.ImageId)
		}
	}
	if len(images) != 2 {
		return nil, fmt.Errorf("moto ships Amazon Linux images for %v, want x86_64 and arm64", images)
	}
	return images, nil
}

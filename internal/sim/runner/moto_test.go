package runner

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/stratos-sh/stratos/internal/sim/moto"
)

// TestPrepareAccount checks what the runner creates in moto, read back as the EC2
// provider's node class resolution reads it: subnets and a security group by the
// discovery tag, the node role by name, an image per architecture behind the alias.
func TestPrepareAccount(t *testing.T) {
	server := moto.StartT(t)
	ctx := context.Background()
	if err := prepareAccount(ctx, server.Endpoint, "c1"); err != nil {
		t.Fatal(err)
	}
	endpoint := aws.String(server.Endpoint)
	ec2Client := ec2.New(ec2.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: endpoint})
	byTag := []ec2types.Filter{{Name: aws.String("tag:" + discoveryTag), Values: []string{"c1"}}}

	subnets, err := ec2Client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: byTag})
	if err != nil {
		t.Fatal(err)
	}
	var zones []string
	for _, s := range subnets.Subnets {
		zones = append(zones, aws.ToString(s.AvailabilityZone))
	}
	slices.Sort(zones)
	if !slices.Equal(zones, awsZones) {
		t.Errorf("tagged subnets in %v, want one in each of %v", zones, awsZones)
	}
	groups, err := ec2Client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: byTag})
	if err != nil || len(groups.SecurityGroups) != 1 {
		t.Errorf("tagged security groups: %v, %v; want one", groups, err)
	}
	iamClient := iam.New(iam.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: endpoint})
	if _, err := iamClient.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(nodeRole)}); err != nil {
		t.Errorf("the node role: %v", err)
	}

	ssmClient := ssm.New(ssm.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: endpoint})
	for _, arch := range []string{"x86_64", "arm64"} {
		name := ssmParameterRoot + "/eks/optimized-ami/" + kubernetesVersion + "/amazon-linux-2023/" + arch + "/standard/recommended/image_id"
		param, err := ssmClient.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		images, err := ec2Client.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{aws.ToString(param.Parameter.Value)}})
		if err != nil || len(images.Images) != 1 || string(images.Images[0].Architecture) != arch {
			t.Errorf("%s names %s: %v, %v; want an image of %s", name, aws.ToString(param.Parameter.Value), images, err, arch)
		}
	}
}

package aws

import (
	"cmp"
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// tagSpec tags a resource at its creation.
func tagSpec(kind ec2types.ResourceType, tags map[string]string) []ec2types.TagSpecification {
	if len(tags) == 0 {
		return nil
	}
	spec := ec2types.TagSpecification{ResourceType: kind}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		spec.Tags = append(spec.Tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return []ec2types.TagSpecification{spec}
}

func createVPC(t *testing.T, clients *Clients) string {
	t.Helper()
	out, err := clients.EC2.CreateVpc(context.Background(), &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.Vpc.VpcId)
}

func createSubnet(t *testing.T, clients *Clients, vpc, cidr, zone string, tags map[string]string) string {
	t.Helper()
	out, err := clients.EC2.CreateSubnet(context.Background(), &ec2.CreateSubnetInput{
		VpcId: aws.String(vpc), CidrBlock: aws.String(cidr), AvailabilityZone: aws.String(zone),
		TagSpecifications: tagSpec(ec2types.ResourceTypeSubnet, tags)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.Subnet.SubnetId)
}

func createSecurityGroup(t *testing.T, clients *Clients, vpc, name string, tags map[string]string) string {
	t.Helper()
	out, err := clients.EC2.CreateSecurityGroup(context.Background(), &ec2.CreateSecurityGroupInput{
		VpcId: aws.String(vpc), GroupName: aws.String(name), Description: aws.String(name),
		TagSpecifications: tagSpec(ec2types.ResourceTypeSecurityGroup, tags)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.GroupId)
}

// zoneIDs are the zone IDs EC2 gives each zone, read on their own.
func zoneIDs(t *testing.T, clients *Clients) map[string]string {
	t.Helper()
	out, err := clients.EC2.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, z := range out.AvailabilityZones {
		ids[aws.ToString(z.ZoneName)] = aws.ToString(z.ZoneId)
	}
	return ids
}

// Subnets resolve by ID and by tags, with their zones; terms add up, a term's tags all
// hold, and * matches any value.
func TestSubnetSelectorsResolveWithZones(t *testing.T) {
	r, clients := newTestResolver(t)
	vpc := createVPC(t, clients)
	a := createSubnet(t, clients, vpc, "10.0.1.0/24", "us-east-1a", map[string]string{"stratos.sh/discovery": "test", "tier": "private"})
	b := createSubnet(t, clients, vpc, "10.0.2.0/24", "us-east-1b", map[string]string{"stratos.sh/discovery": "test", "tier": "public"})
	c := createSubnet(t, clients, vpc, "10.0.3.0/24", "us-east-1c", map[string]string{"other": "x"})
	ids := zoneIDs(t, clients)
	subnet := func(id, zone string) v1beta1.ResolvedSubnet {
		return v1beta1.ResolvedSubnet{ID: id, Zone: zone, ZoneID: ids[zone]}
	}
	byID := func(want ...v1beta1.ResolvedSubnet) []v1beta1.ResolvedSubnet {
		slices.SortFunc(want, func(x, y v1beta1.ResolvedSubnet) int { return cmp.Compare(x.ID, y.ID) })
		return want
	}
	cases := []struct {
		name  string
		terms []v1beta1.SubnetSelectorTerm
		want  []v1beta1.ResolvedSubnet
	}{
		{"by tag", []v1beta1.SubnetSelectorTerm{{Tags: map[string]string{"stratos.sh/discovery": "test"}}},
			byID(subnet(a, "us-east-1a"), subnet(b, "us-east-1b"))},
		{"by tags that must all hold", []v1beta1.SubnetSelectorTerm{{Tags: map[string]string{"stratos.sh/discovery": "test", "tier": "private"}}},
			byID(subnet(a, "us-east-1a"))},
		{"by any value of a tag", []v1beta1.SubnetSelectorTerm{{Tags: map[string]string{"other": "*"}}},
			byID(subnet(c, "us-east-1c"))},
		{"by ID", []v1beta1.SubnetSelectorTerm{{ID: b}}, byID(subnet(b, "us-east-1b"))},
		{"terms add up", []v1beta1.SubnetSelectorTerm{{ID: c}, {Tags: map[string]string{"tier": "private"}}, {ID: a}},
			byID(subnet(a, "us-east-1a"), subnet(c, "us-east-1c"))},
	}
	for _, tc := range cases {
		got, failure := r.resolveSubnets(context.Background(), tc.terms)
		if failure != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: resolved to %+v, %v; want %+v", tc.name, got, failure, tc.want)
		}
	}
	if ids["us-east-1a"] == "" {
		t.Errorf("moto gave no zone ID for us-east-1a: the zone IDs above were not checked")
	}
	for _, terms := range [][]v1beta1.SubnetSelectorTerm{{{Tags: map[string]string{"tier": "none"}}}, {{ID: "subnet-0000000000000dead"}}} {
		if _, failure := r.resolveSubnets(context.Background(), terms); failure == nil || failure.Reason != ReasonSubnetsNotFound {
			t.Errorf("%+v failed with %+v; want SubnetsNotFound", terms, failure)
		}
	}
}

// Security groups resolve by ID, by name and by tags; terms add up.
func TestSecurityGroupSelectorsResolve(t *testing.T) {
	r, clients := newTestResolver(t)
	vpc := createVPC(t, clients)
	nodes := createSecurityGroup(t, clients, vpc, "nodes", map[string]string{"stratos.sh/discovery": "test"})
	extra := createSecurityGroup(t, clients, vpc, "extra", map[string]string{"role": "extra"})
	cases := []struct {
		name  string
		terms []v1beta1.SecurityGroupSelectorTerm
		want  []v1beta1.ResolvedSecurityGroup
	}{
		{"by tag", []v1beta1.SecurityGroupSelectorTerm{{Tags: map[string]string{"stratos.sh/discovery": "test"}}}, []v1beta1.ResolvedSecurityGroup{{ID: nodes, Name: "nodes"}}},
		{"by name", []v1beta1.SecurityGroupSelectorTerm{{Name: "extra"}}, []v1beta1.ResolvedSecurityGroup{{ID: extra, Name: "extra"}}},
		{"by ID", []v1beta1.SecurityGroupSelectorTerm{{ID: extra}}, []v1beta1.ResolvedSecurityGroup{{ID: extra, Name: "extra"}}},
	}
	both := []v1beta1.ResolvedSecurityGroup{{ID: nodes, Name: "nodes"}, {ID: extra, Name: "extra"}}
	if both[1].ID < both[0].ID {
		both[0], both[1] = both[1], both[0]
	}
	cases = append(cases, struct {
		name  string
		terms []v1beta1.SecurityGroupSelectorTerm
		want  []v1beta1.ResolvedSecurityGroup
	}{"terms add up", []v1beta1.SecurityGroupSelectorTerm{{Name: "extra"}, {Tags: map[string]string{"stratos.sh/discovery": "*"}}}, both})
	for _, tc := range cases {
		got, failure := r.resolveSecurityGroups(context.Background(), tc.terms)
		if failure != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: resolved to %+v, %v; want %+v", tc.name, got, failure, tc.want)
		}
	}
	for _, terms := range [][]v1beta1.SecurityGroupSelectorTerm{{{Name: "nobody"}}, {{ID: "sg-0000000000000dead"}}} {
		if _, failure := r.resolveSecurityGroups(context.Background(), terms); failure == nil || failure.Reason != ReasonSecurityGroupsNotFound {
			t.Errorf("%+v failed with %+v; want SecurityGroupsNotFound", terms, failure)
		}
	}
}

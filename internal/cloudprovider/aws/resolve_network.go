package aws

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// filter is an EC2 filter: name matches any of values, where * and ? are wildcards.
func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

// tagFilters match resources that carry every tag, in key order; a value of * matches
// any value of the key (EC2 reads * as a wildcard in filter values).
func tagFilters(tags map[string]string) []ec2types.Filter {
	var filters []ec2types.Filter
	for _, key := range slices.Sorted(maps.Keys(tags)) {
		filters = append(filters, filter("tag:"+key, tags[key]))
	}
	return filters
}

// networkQueries are the filters of selector terms, one query per term that selects by
// tags and one for all the terms that select by ID (and one for those by name): terms
// add up, the conditions of one term all hold.
func networkQueries(idFilter string, ids []string, nameFilter string, names []string, tagTerms []map[string]string) [][]ec2types.Filter {
	var queries [][]ec2types.Filter
	if len(ids) > 0 {
		queries = append(queries, []ec2types.Filter{filter(idFilter, ids...)})
	}
	if len(names) > 0 {
		queries = append(queries, []ec2types.Filter{filter(nameFilter, names...)})
	}
	for _, tags := range tagTerms {
		queries = append(queries, tagFilters(tags))
	}
	return queries
}

// resolveSubnets resolves the subnet selector terms to every subnet any term matches,
// by ID, with its zone.
func (r *Resolver) resolveSubnets(ctx context.Context, terms []v1beta1.SubnetSelectorTerm) ([]v1beta1.ResolvedSubnet, *Failure) {
	var ids []string
	var tagTerms []map[string]string
	for _, term := range terms {
		if term.ID != "" {
			ids = append(ids, term.ID)
		} else {
			tagTerms = append(tagTerms, term.Tags)
		}
	}
	found := map[string]v1beta1.ResolvedSubnet{}
	for _, filters := range networkQueries("subnet-id", ids, "", nil, tagTerms) {
		pages := ec2.NewDescribeSubnetsPaginator(r.clients.EC2, &ec2.DescribeSubnetsInput{Filters: filters, MaxResults: aws.Int32(1000)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, awsFailure(PartSubnets, "describing subnets", err)
			}
			for _, s := range page.Subnets {
				id := aws.ToString(s.SubnetId)
				found[id] = v1beta1.ResolvedSubnet{ID: id, Zone: aws.ToString(s.AvailabilityZone), ZoneID: aws.ToString(s.AvailabilityZoneId)}
			}
		}
	}
	if len(found) == 0 {
		return nil, &Failure{Part: PartSubnets, Reason: ReasonSubnetsNotFound, Message: "no subnet matches spec.subnetSelectorTerms"}
	}
	return slices.SortedFunc(maps.Values(found), func(a, b v1beta1.ResolvedSubnet) int { return cmp.Compare(a.ID, b.ID) }), nil
}

// resolveSecurityGroups resolves the security group selector terms to every group any
// term matches, by ID.
func (r *Resolver) resolveSecurityGroups(ctx context.Context, terms []v1beta1.SecurityGroupSelectorTerm) ([]v1beta1.ResolvedSecurityGroup, *Failure) {
	var ids, names []string
	var tagTerms []map[string]string
	for _, term := range terms {
		switch {
		case term.ID != "":
			ids = append(ids, term.ID)
		case term.Name != "":
			names = append(names, term.Name)
		default:
			tagTerms = append(tagTerms, term.Tags)
		}
	}
	found := map[string]v1beta1.ResolvedSecurityGroup{}
	for _, filters := range networkQueries("group-id", ids, "group-name", names, tagTerms) {
		pages := ec2.NewDescribeSecurityGroupsPaginator(r.clients.EC2, &ec2.DescribeSecurityGroupsInput{Filters: filters, MaxResults: aws.Int32(1000)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, awsFailure(PartSecurityGroups, "describing security groups", err)
			}
			for _, g := range page.SecurityGroups {
				id := aws.ToString(g.GroupId)
				found[id] = v1beta1.ResolvedSecurityGroup{ID: id, Name: aws.ToString(g.GroupName)}
			}
		}
	}
	if len(found) == 0 {
		return nil, &Failure{Part: PartSecurityGroups, Reason: ReasonSecurityGroupsNotFound, Message: "no security group matches spec.securityGroupSelectorTerms"}
	}
	return slices.SortedFunc(maps.Values(found), func(a, b v1beta1.ResolvedSecurityGroup) int { return cmp.Compare(a.ID, b.ID) }), nil
}

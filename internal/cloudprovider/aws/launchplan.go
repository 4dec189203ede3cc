package aws

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Limits of what one launch offers EC2.
const (
	// maxInstanceTypes is the most instance types one launch offers, the cheapest: enough
	// for EC2 to find capacity (Karpenter offers the same number), few enough to keep the
	// request small.
	maxInstanceTypes = 60
	// maxOverrides is the most overrides (type × subnet) of one fleet, EC2's limit for
	// fleets of type request and maintain, which instant fleets are held to as well.
	maxOverrides = 300
)

// launchPlan is what one launch offers EC2: the capacity type and the overrides EC2
// picks among, cheapest first.
type launchPlan struct {
	capacityType string
	overrides    []launchOverride
}

// launchOverride is one instance type in one subnet, with the image of its architecture.
type launchOverride struct {
	instanceType string
	subnet       v1beta1.ResolvedSubnet
	ami          v1beta1.ResolvedAMI
}

// candidate is an offering a launch may use.
type candidate struct {
	instanceType *cloudprovider.InstanceType
	offering     cloudprovider.Offering
	subnet       v1beta1.ResolvedSubnet
	ami          v1beta1.ResolvedAMI
}

// planLaunch chooses what a launch offers EC2, from the instance types of the node class:
// every offering that satisfies the request's requirements, whose type's allocatable
// under the request's kubelet configuration fits its requests, that is available and not marked unavailable, in a zone with a
// subnet, of an architecture with an image. Spot when any such offering is spot (the
// requirements decide whether spot is allowed), else on-demand; the cheapest
// maxInstanceTypes types, each in every zone it qualifies in, up to maxOverrides.
func planLaunch(class *v1beta1.EC2NodeClass, req *cloudprovider.CreateRequest, instanceTypes []*cloudprovider.InstanceType) (*launchPlan, error) {
	amis := map[string]v1beta1.ResolvedAMI{}
	for _, ami := range class.Status.AMIs {
		if _, ok := amis[ami.Architecture]; !ok {
			amis[ami.Architecture] = ami
		}
	}
	// One subnet per zone, the first the node class resolved: a second one in the same
	// zone would not change what EC2 picks, and would take room among the overrides.
	subnets := map[string]v1beta1.ResolvedSubnet{}
	for _, s := range class.Status.Subnets {
		if _, ok := subnets[s.Zone]; !ok {
			subnets[s.Zone] = s
		}
	}
	unavailable := map[cloudprovider.OfferingKey]bool{}
	for _, key := range req.Unavailable {
		unavailable[key] = true
	}

	var candidates []candidate
	satisfying, avoided := 0, 0
	for _, t := range instanceTypes {
		ami, ok := amis[t.Architecture]
		if !ok || !cloudprovider.HasRoomFor(t, req.Kubelet, req.Requests) {
			continue
		}
		for _, o := range t.Offerings {
			subnet, ok := subnets[o.Zone]
			if !ok {
				continue
			}
			if ok, err := cloudprovider.Satisfies(t, o, req.Requirements); err != nil {
				return nil, cloudprovider.NewError(cloudprovider.CodeInvalidParameter, cloudprovider.OpCreate, "", "%v", err)
			} else if !ok {
				continue
			}
			satisfying++
			if !o.Available || unavailable[t.Key(o)] {
				avoided++
				continue
			}
			candidates = append(candidates, candidate{instanceType: t, offering: o, subnet: subnet, ami: ami})
		}
	}
	if len(candidates) == 0 {
		if satisfying == 0 {
			return nil, cloudprovider.NewError(cloudprovider.CodeInsufficientCapacity, cloudprovider.OpCreate, "",
				"no instance type of EC2NodeClass %s, in the zones of its subnets and the architectures of its images, satisfies the requirements and requests", class.Name)
		}
		return nil, cloudprovider.NewError(cloudprovider.CodeInsufficientCapacity, cloudprovider.OpCreate, "",
			"all %d offerings of EC2NodeClass %s that satisfy the requirements and requests are unavailable now", avoided, class.Name)
	}

	plan := &launchPlan{capacityType: v1beta1.CapacityTypeOnDemand}
	if slices.ContainsFunc(candidates, func(c candidate) bool { return c.offering.CapacityType == v1beta1.CapacityTypeSpot }) {
		plan.capacityType = v1beta1.CapacityTypeSpot
	}
	candidates = slices.DeleteFunc(candidates, func(c candidate) bool { return c.offering.CapacityType != plan.capacityType })
	slices.SortFunc(candidates, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.offering.PricePerHour, b.offering.PricePerHour),
			strings.Compare(a.instanceType.Name, b.instanceType.Name), strings.Compare(a.offering.Zone, b.offering.Zone))
	})
	// The cheapest types, in the order of their cheapest offering; each with every zone.
	var chosen []string
	for _, c := range candidates {
		if !slices.Contains(chosen, c.instanceType.Name) && len(chosen) < maxInstanceTypes {
			chosen = append(chosen, c.instanceType.Name)
		}
	}
	for _, c := range candidates {
		if slices.Contains(chosen, c.instanceType.Name) && len(plan.overrides) < maxOverrides {
			plan.overrides = append(plan.overrides, launchOverride{instanceType: c.instanceType.Name, subnet: c.subnet, ami: c.ami})
		}
	}
	return plan, nil
}

// zoneOfSubnet is the zone of a subnet of the plan.
func (p *launchPlan) zoneOfSubnet(subnetID string) string {
	for _, o := range p.overrides {
		if o.subnet.ID == subnetID {
			return o.subnet.Zone
		}
	}
	return ""
}

// describe summarizes the plan for errors: "12 overrides of 5 on-demand types".
func (p *launchPlan) describe() string {
	var types []string
	for _, o := range p.overrides {
		if !slices.Contains(types, o.instanceType) {
			types = append(types, o.instanceType)
		}
	}
	return fmt.Sprintf("%d overrides of %d %s types", len(p.overrides), len(types), p.capacityType)
}

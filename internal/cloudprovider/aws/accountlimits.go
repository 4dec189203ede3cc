package aws

import (
	"slices"
	"strings"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// EC2 account limits a launch can run into, by what they cover. A launch refused by
// one falls through to offerings it does not cover, where the node class and the
// claim's requirements allow any; otherwise the claim waits, saying which limit.
var (
	// familyGroupLimits cover one capacity type of one group of instance families
	// (vcpuGroup): On-Demand vCPU quotas answer VcpuLimitExceeded, Spot vCPU quotas
	// MaxSpotInstanceCountExceeded.
	familyGroupLimits = []string{"VcpuLimitExceeded", "MaxSpotInstanceCountExceeded"}
	// capacityTypeLimits cover every offering of one capacity type: the instance-count
	// limit of accounts not yet moved to vCPU quotas.
	capacityTypeLimits = []string{"InstanceLimitExceeded"}
)

// vcpuGroups are the groups of instance families that EC2's vCPU quotas count together
// ("Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", "All Standard
// Spot Instance Requests", ...; see docs/aws.md). Longer prefixes come first, so that
// inf2 is Inf and not I.
var vcpuGroups = []struct{ group, prefixes string }{
	{"High Memory", "u-,u7"},
	{"HPC", "hpc"},
	{"Trn", "trn"},
	{"Inf", "inf"},
	{"DL", "dl"},
	{"Mac", "mac"},
	{"G and VT", "g,vt"},
	{"F", "f"},
	{"P", "p"},
	{"X", "x"},
	{"Standard (A, C, D, H, I, M, R, T, Z)", "a,c,d,h,i,m,r,t,z"},
}

// vcpuGroup is the vCPU quota group of an instance type, such as "Standard (A, C, D,
// H, I, M, R, T, Z)" for m5.large, or "" for a type of no group Stratos knows.
func vcpuGroup(instanceType string) string {
	for _, g := range vcpuGroups {
		for _, prefix := range strings.Split(g.prefixes, ",") {
			if strings.HasPrefix(instanceType, prefix) {
				return g.group
			}
		}
	}
	return ""
}

// isAccountLimit reports whether an EC2 error code is an account limit whose reach
// Stratos knows.
func isAccountLimit(code string) bool {
	return slices.Contains(familyGroupLimits, code) || slices.Contains(capacityTypeLimits, code)
}

// limitCovers returns the offerings of the plan that the account limit named by code
// covers, given the instance types whose overrides EC2 refused with it (none when EC2
// did not say: then every type of the plan was refused, as a fleet tries them all).
func limitCovers(code string, refusedTypes []string, plan *launchPlan) []cloudprovider.OfferingKey {
	groups := map[string]bool{}
	for _, t := range refusedTypes {
		groups[vcpuGroup(t)] = true
	}
	var covered []cloudprovider.OfferingKey
	for _, o := range plan.overrides {
		if slices.Contains(familyGroupLimits, code) && len(refusedTypes) > 0 && !groups[vcpuGroup(o.instanceType)] {
			continue
		}
		key := cloudprovider.OfferingKey{InstanceType: o.instanceType, Zone: o.subnet.Zone, CapacityType: plan.capacityType}
		if !slices.Contains(covered, key) {
			covered = append(covered, key)
		}
	}
	return covered
}

// describeLimit says what an account limit covers, for a claim's condition.
func describeLimit(code, capacityType string, refusedTypes []string) string {
	if slices.Contains(capacityTypeLimits, code) {
		return "the account's limit on running " + capacityType + " instances"
	}
	var groups []string
	for _, t := range refusedTypes {
		if g := vcpuGroup(t); g != "" && !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return "the account's " + capacityType + " vCPU limit"
	}
	slices.Sort(groups)
	return "the account's " + capacityType + " vCPU limit of the " + strings.Join(groups, "; ") + " instance families"
}

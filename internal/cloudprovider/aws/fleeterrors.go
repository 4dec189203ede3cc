package aws

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// fleetErrorPriority orders the codes of a fleet that launched nothing: the error
// returned is of the first code any override failed with. Offerings out of capacity come
// first, so that they are marked unavailable and the next launch tries others; then
// what someone must fix (a permission, a quota, the node class), then the rest.
var fleetErrorPriority = []cloudprovider.ErrorCode{
	cloudprovider.CodeInsufficientCapacity, cloudprovider.CodeUnauthorized, cloudprovider.CodeQuotaExceeded,
	cloudprovider.CodeInvalidParameter, cloudprovider.CodeThrottled,
}

// fleetError is the error of an instant fleet that launched nothing: EC2 answers one
// error per override (or per template) it tried. An insufficient-capacity error carries
// the offerings that failed for lack of capacity; the message lists every distinct
// error with the offerings it concerns.
func fleetError(errs []types.CreateFleetError, plan *launchPlan) error {
	if len(errs) == 0 {
		return cloudprovider.NewError(cloudprovider.CodeInternal, cloudprovider.OpCreate, "", "CreateFleet launched nothing and gave no reason (%s)", plan.describe())
	}
	type group struct {
		code      string
		message   string
		offerings []string
	}
	var (
		groups []*group
		codes  []cloudprovider.ErrorCode
	)
	for _, e := range errs {
		code, message := aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage)
		codes = append(codes, classifyCode(code))
		key, known := fleetErrorOffering(e, plan)
		i := slices.IndexFunc(groups, func(g *group) bool { return g.code == code && g.message == message })
		if i < 0 {
			groups = append(groups, &group{code: code, message: message})
			i = len(groups) - 1
		}
		if known {
			groups[i].offerings = append(groups[i].offerings, key.String())
		}
	}
	code := cloudprovider.CodeInternal
	for _, c := range fleetErrorPriority {
		if slices.Contains(codes, c) {
			code = c
			break
		}
	}
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		part := g.code + ": " + g.message
		if len(g.offerings) > 0 {
			part += " (" + summarize(g.offerings, 3) + ")"
		}
		parts = append(parts, part)
	}
	err := cloudprovider.NewError(code, cloudprovider.OpCreate, "", "EC2 launched nothing from %s: %s", plan.describe(), strings.Join(parts, "; "))
	if code == cloudprovider.CodeInsufficientCapacity {
		err.Offerings = capacityRefusals(errs, plan)
	}
	if limit, refusedTypes := accountLimitOf(errs); limit != "" {
		// The offerings the limit covers are avoided too, so that the next launch falls
		// through to the others; the error names the limit when it is why nothing launched.
		err.Limit = limit
		for _, key := range limitCovers(limit, refusedTypes, plan) {
			if !slices.Contains(err.Offerings, key) {
				err.Offerings = append(err.Offerings, key)
			}
		}
		if code == cloudprovider.CodeQuotaExceeded {
			err.Message = fmt.Sprintf("%s (%s): %s", limit, describeLimit(limit, plan.capacityType, refusedTypes), err.Message)
		}
	}
	return err
}

// accountLimitOf is the first account limit a fleet's errors name, with the instance
// types of the overrides it refused (none when EC2 named no override).
func accountLimitOf(errs []types.CreateFleetError) (string, []string) {
	var limit string
	var refusedTypes []string
	for _, e := range errs {
		code := aws.ToString(e.ErrorCode)
		if !isAccountLimit(code) || (limit != "" && code != limit) {
			continue
		}
		limit = code
		if o := e.LaunchTemplateAndOverrides; o != nil && o.Overrides != nil && o.Overrides.InstanceType != "" {
			refusedTypes = append(refusedTypes, string(o.Overrides.InstanceType))
		}
	}
	return limit, refusedTypes
}

// capacityRefusals are the offerings a fleet's errors say had no capacity, once each.
func capacityRefusals(errs []types.CreateFleetError, plan *launchPlan) []cloudprovider.OfferingKey {
	var failed []cloudprovider.OfferingKey
	for _, e := range errs {
		if classifyCode(aws.ToString(e.ErrorCode)) != cloudprovider.CodeInsufficientCapacity {
			continue
		}
		if key, known := fleetErrorOffering(e, plan); known && !slices.Contains(failed, key) {
			failed = append(failed, key)
		}
	}
	return failed
}

// fleetErrorOffering is the offering an override's error is about, when EC2 says.
func fleetErrorOffering(e types.CreateFleetError, plan *launchPlan) (cloudprovider.OfferingKey, bool) {
	if e.LaunchTemplateAndOverrides == nil || e.LaunchTemplateAndOverrides.Overrides == nil {
		return cloudprovider.OfferingKey{}, false
	}
	o := e.LaunchTemplateAndOverrides.Overrides
	zone := plan.zoneOfSubnet(aws.ToString(o.SubnetId))
	if zone == "" {
		zone = aws.ToString(o.AvailabilityZone)
	}
	capacity := plan.capacityType
	if e.Lifecycle != "" {
		capacity = capacityType(types.InstanceLifecycleType(e.Lifecycle))
	}
	if o.InstanceType == "" || zone == "" {
		return cloudprovider.OfferingKey{}, false
	}
	return cloudprovider.OfferingKey{InstanceType: string(o.InstanceType), Zone: zone, CapacityType: capacity}, true
}

// summarize joins the first limit items and counts the rest.
func summarize(items []string, limit int) string {
	if len(items) <= limit {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:limit], ", "), len(items)-limit)
}

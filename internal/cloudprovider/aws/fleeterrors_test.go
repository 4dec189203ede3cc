package aws

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

func overrideError(instanceType, subnet, lifecycle, code, message string) types.CreateFleetError {
	return types.CreateFleetError{
		ErrorCode: aws.String(code), ErrorMessage: aws.String(message), Lifecycle: types.InstanceLifecycle(lifecycle),
		LaunchTemplateAndOverrides: &types.LaunchTemplateAndOverridesResponse{Overrides: &types.FleetLaunchTemplateOverrides{
			InstanceType: types.InstanceType(instanceType), SubnetId: aws.String(subnet),
		}},
	}
}

func TestFleetError(t *testing.T) {
	plan := &launchPlan{capacityType: "spot", overrides: []launchOverride{
		{instanceType: "m5.large", subnet: planClass().Status.Subnets[0]},
		{instanceType: "m5.large", subnet: planClass().Status.Subnets[1]},
		{instanceType: "c5.large", subnet: planClass().Status.Subnets[1]},
		{instanceType: "g4dn.xlarge", subnet: planClass().Status.Subnets[0]},
	}}
	for _, tc := range []struct {
		name          string
		errs          []types.CreateFleetError
		code          cloudprovider.ErrorCode
		wantOfferings []cloudprovider.OfferingKey
		limit         string
		says          []string
	}{
		{
			name: "out of capacity everywhere",
			errs: []types.CreateFleetError{
				overrideError("m5.large", "subnet-a", "spot", "InsufficientInstanceCapacity", "no m5.large"),
				overrideError("m5.large", "subnet-b", "spot", "UnfulfillableCapacity", "no spot"),
				overrideError("c5.large", "subnet-b", "", "InsufficientInstanceCapacity", "no c5.large"),
			},
			code: cloudprovider.CodeInsufficientCapacity,
			wantOfferings: []cloudprovider.OfferingKey{
				{InstanceType: "m5.large", Zone: zoneA, CapacityType: "spot"},
				{InstanceType: "m5.large", Zone: zoneB, CapacityType: "spot"},
				{InstanceType: "c5.large", Zone: zoneB, CapacityType: "spot"},
			},
			says: []string{"4 overrides of 3 spot types", "InsufficientInstanceCapacity: no m5.large (m5.large spot in us-east-1a)", "UnfulfillableCapacity: no spot"},
		},
		{
			name: "capacity first, so that the offerings are marked",
			errs: []types.CreateFleetError{
				overrideError("m5.large", "subnet-a", "spot", "InvalidParameterValue", "hibernation is not supported"),
				overrideError("c5.large", "subnet-b", "spot", "InsufficientInstanceCapacity", "no c5.large"),
			},
			code:          cloudprovider.CodeInsufficientCapacity,
			wantOfferings: []cloudprovider.OfferingKey{{InstanceType: "c5.large", Zone: zoneB, CapacityType: "spot"}},
			says:          []string{"InvalidParameterValue: hibernation is not supported", "InsufficientInstanceCapacity: no c5.large"},
		},
		{
			name: "unauthorized",
			errs: []types.CreateFleetError{{ErrorCode: aws.String("UnauthorizedOperation"), ErrorMessage: aws.String("You are not authorized to perform this operation.")}},
			code: cloudprovider.CodeUnauthorized,
			says: []string{"UnauthorizedOperation: You are not authorized"},
		},
		{
			// The limit of the standard families covers every m5 and c5 offering of the
			// plan, tried or not, and no G one: those are where the next launch goes.
			name: "a vCPU limit of one group of families",
			errs: []types.CreateFleetError{
				overrideError("m5.large", "subnet-a", "spot", "VcpuLimitExceeded", "You have requested more vCPU capacity than your current vCPU limit"),
				overrideError("g4dn.xlarge", "subnet-a", "spot", "InsufficientInstanceCapacity", "no g4dn.xlarge"),
			},
			code: cloudprovider.CodeInsufficientCapacity,
			wantOfferings: []cloudprovider.OfferingKey{
				{InstanceType: "g4dn.xlarge", Zone: "us-east-1a", CapacityType: "spot"},
				{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot"},
				{InstanceType: "m5.large", Zone: "us-east-1b", CapacityType: "spot"},
				{InstanceType: "c5.large", Zone: "us-east-1b", CapacityType: "spot"},
			},
			limit: "VcpuLimitExceeded",
		},
		{
			name:  "a vCPU limit alone",
			errs:  []types.CreateFleetError{overrideError("g4dn.xlarge", "subnet-a", "spot", "MaxSpotInstanceCountExceeded", "Max spot instance count exceeded")},
			code:  cloudprovider.CodeQuotaExceeded,
			limit: "MaxSpotInstanceCountExceeded",
			wantOfferings: []cloudprovider.OfferingKey{
				{InstanceType: "g4dn.xlarge", Zone: "us-east-1a", CapacityType: "spot"},
			},
			says: []string{"MaxSpotInstanceCountExceeded (the account's spot vCPU limit of the G and VT instance families)"},
		},
		{
			name:  "an instance count limit covers the capacity type",
			errs:  []types.CreateFleetError{{ErrorCode: aws.String("InstanceLimitExceeded"), ErrorMessage: aws.String("Your quota allows for 0 more running instance(s).")}},
			code:  cloudprovider.CodeQuotaExceeded,
			limit: "InstanceLimitExceeded",
			wantOfferings: []cloudprovider.OfferingKey{
				{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot"},
				{InstanceType: "m5.large", Zone: "us-east-1b", CapacityType: "spot"},
				{InstanceType: "c5.large", Zone: "us-east-1b", CapacityType: "spot"},
				{InstanceType: "g4dn.xlarge", Zone: "us-east-1a", CapacityType: "spot"},
			},
			says: []string{"the account's limit on running spot instances"},
		},
		{
			name: "a quota Stratos does not know the reach of",
			errs: []types.CreateFleetError{overrideError("m5.large", "subnet-a", "spot", "VolumeLimitExceeded", "Volume limit exceeded")},
			code: cloudprovider.CodeQuotaExceeded,
			says: []string{"VolumeLimitExceeded"},
		},
		{
			name: "an image EC2 does not know",
			errs: []types.CreateFleetError{overrideError("m5.large", "subnet-a", "spot", "InvalidAMIID.NotFound", "The image id '[ami-1]' does not exist")},
			code: cloudprovider.CodeInvalidParameter,
			says: []string{"InvalidAMIID.NotFound: The image id '[ami-1]' does not exist (m5.large spot in us-east-1a)"},
		},
		{
			name: "no reason given",
			code: cloudprovider.CodeInternal,
			says: []string{"gave no reason"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fleetError(tc.errs, plan)
			var cloudErr *cloudprovider.Error
			if !errors.As(err, &cloudErr) || cloudErr.Code != tc.code {
				t.Fatalf("fleetError = %v, want %s", err, tc.code)
			}
			if !slices.Equal(cloudErr.Offerings, tc.wantOfferings) {
				t.Fatalf("offerings %v, want %v", cloudErr.Offerings, tc.wantOfferings)
			}
			if cloudErr.Limit != tc.limit {
				t.Fatalf("limit %q, want %q", cloudErr.Limit, tc.limit)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("message %q does not say %q", err, s)
				}
			}
		})
	}
}

// A fleet that launched after some overrides failed: the ones out of capacity are
// avoided from then on, once each; other errors are not capacity.
func TestCapacityRefusalsOfAFleetThatLaunched(t *testing.T) {
	plan := &launchPlan{capacityType: "on-demand", overrides: []launchOverride{
		{instanceType: "m5.large", subnet: planClass().Status.Subnets[0]},
		{instanceType: "c5.large", subnet: planClass().Status.Subnets[1]},
	}}
	got := capacityRefusals([]types.CreateFleetError{
		overrideError("m5.large", "subnet-a", "", "InsufficientInstanceCapacity", "no m5.large"),
		overrideError("m5.large", "subnet-a", "", "InsufficientInstanceCapacity", "no m5.large again"),
		overrideError("c5.large", "subnet-b", "", "InvalidParameterValue", "not this one"),
	}, plan)
	want := []cloudprovider.OfferingKey{{InstanceType: "m5.large", Zone: zoneA, CapacityType: "on-demand"}}
	if !slices.Equal(got, want) {
		t.Fatalf("refusals %v, want %v", got, want)
	}
}

// Instance types fall in the groups of EC2's vCPU quotas, the longer prefixes first.
func TestVcpuGroups(t *testing.T) {
	for instanceType, want := range map[string]string{
		"m5.large": "Standard (A, C, D, H, I, M, R, T, Z)", "a1.medium": "Standard (A, C, D, H, I, M, R, T, Z)",
		"i4i.large": "Standard (A, C, D, H, I, M, R, T, Z)", "z1d.large": "Standard (A, C, D, H, I, M, R, T, Z)",
		"inf2.xlarge": "Inf", "trn1.2xlarge": "Trn", "dl1.24xlarge": "DL", "hpc7g.4xlarge": "HPC", "mac2.metal": "Mac",
		"g5.xlarge": "G and VT", "vt1.3xlarge": "G and VT", "f1.2xlarge": "F", "p4d.24xlarge": "P", "x2idn.16xlarge": "X",
		"u-6tb1.metal": "High Memory", "u7i-12tb.224xlarge": "High Memory", "q9.large": "",
	} {
		if got := vcpuGroup(instanceType); got != want {
			t.Errorf("vcpuGroup(%s) = %q, want %q", instanceType, got, want)
		}
	}
}

package aws

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// apiError is an AWS error as the SDK returns it: an API error inside an operation error.
func apiError(operation, code, message string) error {
	return &smithy.OperationError{ServiceID: "EC2", OperationName: operation, Err: &smithy.GenericAPIError{Code: code, Message: message}}
}

func TestClassifyMapsEC2ErrorCodes(t *testing.T) {
	for code, want := range map[string]cloudprovider.ErrorCode{
		"InvalidInstanceID.NotFound":                  cloudprovider.CodeNotFound,
		"InvalidInstanceID.Malformed":                 cloudprovider.CodeNotFound,
		"IncorrectInstanceState":                      cloudprovider.CodeInvalidState,
		"IncorrectState":                              cloudprovider.CodeInvalidState,
		"InsufficientInstanceCapacity":                cloudprovider.CodeInsufficientCapacity,
		"InsufficientHostCapacity":                    cloudprovider.CodeInsufficientCapacity,
		"InsufficientCapacity":                        cloudprovider.CodeInsufficientCapacity,
		"UnfulfillableCapacity":                       cloudprovider.CodeInsufficientCapacity,
		"MaxSpotInstanceCountExceeded":                cloudprovider.CodeQuotaExceeded,
		"InsufficientFreeAddressesInSubnet":           cloudprovider.CodeInsufficientCapacity,
		"RequestLimitExceeded":                        cloudprovider.CodeThrottled,
		"Throttling":                                  cloudprovider.CodeThrottled,
		"InstanceLimitExceeded":                       cloudprovider.CodeQuotaExceeded,
		"VcpuLimitExceeded":                           cloudprovider.CodeQuotaExceeded,
		"VolumeLimitExceeded":                         cloudprovider.CodeQuotaExceeded,
		"UnauthorizedOperation":                       cloudprovider.CodeUnauthorized,
		"AuthFailure":                                 cloudprovider.CodeUnauthorized,
		"InvalidParameterValue":                       cloudprovider.CodeInvalidParameter,
		"InvalidParameterCombination":                 cloudprovider.CodeInvalidParameter,
		"InvalidLaunchTemplateName.NotFoundException": cloudprovider.CodeInvalidParameter,
		"InvalidAMIID.NotFound":                       cloudprovider.CodeInvalidParameter,
		"InvalidSubnetID.NotFound":                    cloudprovider.CodeInvalidParameter,
		"MissingParameter":                            cloudprovider.CodeInvalidParameter,
		"UnsupportedOperation":                        cloudprovider.CodeInvalidParameter,
		"InternalError":                               cloudprovider.CodeInternal,
		"Unavailable":                                 cloudprovider.CodeInternal,
		"SomethingNew":                                cloudprovider.CodeInternal,
	} {
		err := classify(cloudprovider.OpStart, "i-1", apiError("StartInstances", code, "what EC2 said"))
		if err.Code != want {
			t.Errorf("%s classified %s, want %s", code, err.Code, want)
		}
		if msg := err.Error(); !strings.Contains(msg, "ec2:StartInstances") || !strings.Contains(msg, code) || !strings.Contains(msg, "what EC2 said") {
			t.Errorf("%s: message %q does not say the call, the code and EC2's words", code, msg)
		}
		if !errors.Is(err, &cloudprovider.Error{Code: want}) {
			t.Errorf("%s: errors.Is does not match its code", code)
		}
	}
}

func TestClassifyWithoutAnAnswerIsInternal(t *testing.T) {
	err := classify(cloudprovider.OpGet, "", context.DeadlineExceeded)
	if err.Code != cloudprovider.CodeInternal || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("classify(deadline) = %v, want an internal error wrapping it", err)
	}
}

func TestUnauthorizedMessageSaysWhatToDo(t *testing.T) {
	err := classify(cloudprovider.OpCreate, "", apiError("CreateFleet", "UnauthorizedOperation",
		"You are not authorized to perform this operation. User: arn:aws:sts::1:assumed-role/stratos is not authorized. Encoded authorization failure message: AbC-123_x"))
	msg := err.Error()
	for _, want := range []string{
		"Unauthorized", "not allowed to call ec2:CreateFleet", "IAM policy",
		"assumed-role/stratos is not authorized", "AbC-123_x", "aws sts decode-authorization-message",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
}

func TestNamedInstancesAreThoseOfTheBatchTheMessageNames(t *testing.T) {
	batch := []string{"i-0123456789abcdef0", "i-11111111", "i-22222222"}
	for _, tc := range []struct {
		message string
		want    []string
	}{
		{"The instance ID 'i-11111111' does not exist", []string{"i-11111111"}},
		{"The instance IDs 'i-0123456789abcdef0, i-22222222' do not exist", []string{"i-0123456789abcdef0", "i-22222222"}},
		{"The instance 'i-99999999' is not in a state from which it can be started.", nil},
		{"We currently do not have sufficient m5.large capacity in us-east-1a.", nil},
	} {
		got := namedInstances(apiError("StartInstances", "X", tc.message), batch)
		if !slices.Equal(got, tc.want) {
			t.Errorf("namedInstances(%q) = %v, want %v", tc.message, got, tc.want)
		}
	}
}

func TestCapacityAnswersAreNotRetried(t *testing.T) {
	if capacityNotRetried.IsErrorRetryable(apiError("StartInstances", "InsufficientInstanceCapacity", "")).Bool() {
		t.Fatal("an insufficient-capacity answer is retried")
	}
	if got := capacityNotRetried.IsErrorRetryable(apiError("StartInstances", "InternalError", "")); got.String() != "unknown" {
		t.Fatalf("an internal error is %v, want left to the SDK's other rules", got)
	}
}

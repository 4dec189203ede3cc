package aws

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// AWS error codes, grouped by what Stratos does about them. Codes not listed are
// classified by the rules of classifyCode.
var (
	// notFoundCodes: the instance does not exist (or cannot, being malformed).
	notFoundCodes = []string{"InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed"}
	// invalidStateCodes: the instance is in a state the action does not apply to.
	invalidStateCodes = []string{"IncorrectInstanceState", "IncorrectState", "IncorrectSpotRequestState"}
	// capacityCodes: EC2 has no capacity for the offering now; another offering may have.
	// Unsupported is what a fleet answers for a type not sold in a zone, and a subnet out
	// of addresses makes its zone unusable: both are offerings to avoid for a while.
	capacityCodes = []string{
		"InsufficientInstanceCapacity", "InsufficientHostCapacity", "InsufficientReservedInstanceCapacity",
		"InsufficientCapacity", "InsufficientFreeAddressesInSubnet", "UnfulfillableCapacity",
		"SpotMaxPriceTooLow", "Unsupported",
	}
	// throttleCodes: too many requests. The SDK's retryer retries these before they reach
	// us; one that does is a throttled call.
	throttleCodes = []string{
		"RequestLimitExceeded", "Throttling", "ThrottlingException", "ThrottledException",
		"RequestThrottled", "RequestThrottledException", "TooManyRequestsException", "SlowDown",
	}
	// unauthorizedCodes: the credentials or their permissions are refused.
	unauthorizedCodes = []string{
		"UnauthorizedOperation", "AccessDenied", "AccessDeniedException", "AuthFailure",
		"Blocked", "OptInRequired", "PendingVerification", "UnrecognizedClientException",
		"InvalidClientTokenId", "ExpiredToken", "SignatureDoesNotMatch",
	}
)

// classifyCode maps an AWS error code to a cloudprovider code. Account limits
// (accountlimits.go) are quotas. Beyond the lists above:
// a code ending in LimitExceeded is a quota (RequestLimitExceeded, throttling, is listed
// first); a code starting with Invalid, Missing or Unsupported, or naming an operation
// not permitted, is a request EC2 refuses as made; anything else (InternalError,
// Unavailable, a code we do not know) is an internal failure, worth retrying.
func classifyCode(code string) cloudprovider.ErrorCode {
	switch {
	case slices.Contains(notFoundCodes, code):
		return cloudprovider.CodeNotFound
	case slices.Contains(invalidStateCodes, code):
		return cloudprovider.CodeInvalidState
	case slices.Contains(capacityCodes, code):
		return cloudprovider.CodeInsufficientCapacity
	case slices.Contains(throttleCodes, code):
		return cloudprovider.CodeThrottled
	case slices.Contains(unauthorizedCodes, code):
		return cloudprovider.CodeUnauthorized
	case isAccountLimit(code), strings.HasSuffix(code, "LimitExceeded"):
		return cloudprovider.CodeQuotaExceeded
	case strings.HasPrefix(code, "Invalid"), strings.HasPrefix(code, "Missing"), strings.HasPrefix(code, "Unsupported"),
		strings.HasPrefix(code, "Unknown"), code == "OperationNotPermitted", code == "IdempotentParameterMismatch":
		return cloudprovider.CodeInvalidParameter
	default:
		return cloudprovider.CodeInternal
	}
}

// classify turns an error of an AWS call into a cloudprovider.Error for op (and the
// instance id, if the error is about one) whose message says what AWS answered in
// words a claim's condition can show: the operation, the AWS code, AWS's message and
// the request ID to quote to AWS support. An error without an AWS answer (a connection
// refused, a cancelled context) is internal.
func classify(op, id string, err error) *cloudprovider.Error {
	if err == nil {
		return nil
	}
	var cloudErr *cloudprovider.Error
	if errors.As(err, &cloudErr) {
		return cloudErr
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return &cloudprovider.Error{Code: cloudprovider.CodeInternal, Op: op, InstanceID: id, Message: "no answer from AWS", Cause: err}
	}
	code := classifyCode(apiErr.ErrorCode())
	return &cloudprovider.Error{Code: code, Op: op, InstanceID: id, Message: describeAPIError(err, apiErr, code)}
}

// describeAPIError is the readable message of an AWS error.
func describeAPIError(err error, apiErr smithy.APIError, code cloudprovider.ErrorCode) string {
	call := "AWS"
	var opErr *smithy.OperationError
	if errors.As(err, &opErr) {
		call = strings.ToLower(opErr.Service()) + ":" + opErr.Operation()
	}
	msg := fmt.Sprintf("%s answered %s: %s", call, apiErr.ErrorCode(), apiErr.ErrorMessage())
	if code == cloudprovider.CodeUnauthorized {
		text, encoded := splitAuthorizationMessage(apiErr.ErrorMessage())
		msg = fmt.Sprintf("Stratos is not allowed to call %s (%s); grant it in the controller's IAM policy (docs/aws.md)", call, apiErr.ErrorCode())
		if text != "" {
			msg += ": " + text
		}
		if encoded != "" {
			msg += "; the full reason, encoded: " + encoded + " (read it with aws sts decode-authorization-message --encoded-message)"
		}
	}
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) && respErr.ServiceRequestID() != "" {
		msg += " (request " + respErr.ServiceRequestID() + ")"
	}
	return msg
}

// splitAuthorizationMessage splits an UnauthorizedOperation message into its text and
// the encoded reason EC2 appends to it, if any.
func splitAuthorizationMessage(message string) (text, encoded string) {
	const marker = "Encoded authorization failure message:"
	i := strings.Index(message, marker)
	if i < 0 {
		return strings.TrimSpace(message), ""
	}
	return strings.TrimSpace(message[:i]), strings.TrimSpace(message[i+len(marker):])
}

// awsErrorCode is the AWS error code of err, or empty when AWS did not answer.
func awsErrorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// instanceIDPattern matches EC2 instance IDs in error messages.
var instanceIDPattern = regexp.MustCompile(`\bi-[0-9a-f]{8,17}\b`)

// namedInstances returns the IDs of batch that an AWS error's message names:
// InvalidInstanceID.NotFound lists the unknown IDs, IncorrectInstanceState names the
// instance in the wrong state.
func namedInstances(err error, batch []string) []string {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return nil
	}
	var named []string
	for _, id := range instanceIDPattern.FindAllString(apiErr.ErrorMessage(), -1) {
		if slices.Contains(batch, id) && !slices.Contains(named, id) {
			named = append(named, id)
		}
	}
	return named
}

// capacityNotRetried tells the SDK's retryer not to retry an out-of-capacity answer:
// EC2 sends InsufficientInstanceCapacity as a server error, which the retryer would
// retry at once, to the same answer, delaying the refusal that sends a start or a
// launch elsewhere.
var capacityNotRetried = retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
	if slices.Contains(capacityCodes, awsErrorCode(err)) {
		return aws.FalseTernary
	}
	return aws.UnknownTernary
})

package cloudprovider

import (
	"errors"
	"fmt"
)

// ErrorCode classifies a cloud error so that callers can decide without parsing text:
// retry a throttled call, pick another offering after insufficient capacity, forget an
// instance that is not found.
type ErrorCode string

const (
	CodeNotFound ErrorCode = "NotFound"
	// CodeNotOwned: the instance exists but does not carry the cluster's ownership tag
	// (stratos.sh/cluster with the cluster's name): someone removed or changed the tag, or
	// the operator runs under another --cluster-name. It is not gone, and Stratos does
	// not act on it.
	CodeNotOwned             ErrorCode = "NotOwned"
	CodeInsufficientCapacity ErrorCode = "InsufficientCapacity"
	CodeThrottled            ErrorCode = "Throttled"
	CodeInvalidState         ErrorCode = "InvalidState"
	CodeQuotaExceeded        ErrorCode = "QuotaExceeded"
	// CodeUnauthorized: the cloud refused the call for lack of permission; someone must
	// grant it (EC2's UnauthorizedOperation).
	CodeUnauthorized ErrorCode = "Unauthorized"
	// CodeInvalidParameter: the cloud refused what was asked, such as an image, a subnet
	// or a disk setting of the node class; the same call fails until the node class
	// changes.
	CodeInvalidParameter ErrorCode = "InvalidParameter"
	// CodeUnsupported: the instance cannot do what was asked, such as hibernate when it
	// was not launched for hibernation (EC2's UnsupportedHibernationConfiguration).
	CodeUnsupported ErrorCode = "Unsupported"
	// CodeInternal is any other failure of the cloud, such as a 5xx answer.
	CodeInternal ErrorCode = "Internal"
)

// Error is a classified cloud error.
type Error struct {
	Code ErrorCode
	// Op is the operation that failed, such as Start.
	Op string
	// InstanceID is the instance concerned, when there is one.
	InstanceID string
	// Message says what happened, in the cloud's words or ours.
	Message string
	// Offerings are those the cloud tried and found out of capacity, for an
	// InsufficientCapacity error: the compatible offerings of a refused launch (EC2's
	// CreateFleet reports an error per override), or the offering of an instance whose
	// start was refused. The CloudProvider marks them unavailable.
	//
	// For a QuotaExceeded error of an account limit that covers only some offerings (a
	// vCPU limit covers a group of instance families and a capacity type), Offerings are
	// those of the launch the limit covers: the CloudProvider marks them unavailable too,
	// so that launches and provisioning fall through to offerings outside the limit.
	Offerings []OfferingKey
	// Limit names the account limit a QuotaExceeded error ran into, in the cloud's words
	// (EC2's VcpuLimitExceeded, MaxSpotInstanceCountExceeded, InstanceLimitExceeded...),
	// when the cloud says which.
	Limit string
	// Cause is the underlying error, if any.
	Cause error
}

// Sentinels for errors.Is: errors.Is(err, cloudprovider.ErrNotFound).
var (
	ErrNotFound             = &Error{Code: CodeNotFound}
	ErrNotOwned             = &Error{Code: CodeNotOwned}
	ErrInsufficientCapacity = &Error{Code: CodeInsufficientCapacity}
	ErrThrottled            = &Error{Code: CodeThrottled}
	ErrInvalidState         = &Error{Code: CodeInvalidState}
	ErrQuotaExceeded        = &Error{Code: CodeQuotaExceeded}
	ErrUnauthorized         = &Error{Code: CodeUnauthorized}
	ErrInvalidParameter     = &Error{Code: CodeInvalidParameter}
	ErrUnsupported          = &Error{Code: CodeUnsupported}
	ErrInternal             = &Error{Code: CodeInternal}
)

// NewError returns a classified error.
func NewError(code ErrorCode, op, instanceID, format string, args ...any) *Error {
	return &Error{Code: code, Op: op, InstanceID: instanceID, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	msg := string(e.Code)
	if e.Op != "" {
		msg = e.Op + ": " + msg
	}
	if e.InstanceID != "" {
		msg += " (" + e.InstanceID + ")"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Is matches any Error of the same code, so the sentinels above work with errors.Is.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

func (e *Error) Unwrap() error { return e.Cause }

// CodeOf returns the code of a classified error, and CodeInternal for any other error.
func CodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// IsRetryable reports whether the same call may succeed later without any change:
// throttling and internal cloud failures are; a missing instance or an exhausted quota is not.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	switch CodeOf(err) {
	case CodeThrottled, CodeInternal:
		return true
	default:
		return false
	}
}

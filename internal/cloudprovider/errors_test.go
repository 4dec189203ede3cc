package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestErrorsMatchTheirSentinelThroughWrapping(t *testing.T) {
	err := fmt.Errorf("starting node: %w", NewError(CodeInsufficientCapacity, OpCreate, "", "no m5.large in fake-1a"))
	if !errors.Is(err, ErrInsufficientCapacity) {
		t.Fatalf("errors.Is(%v, ErrInsufficientCapacity) = false", err)
	}
	if errors.Is(err, ErrNotFound) {
		t.Fatalf("an insufficient-capacity error must not match ErrNotFound")
	}
	if got := CodeOf(err); got != CodeInsufficientCapacity {
		t.Fatalf("CodeOf = %s", got)
	}
}

func TestErrorMessageNamesOperationInstanceAndCause(t *testing.T) {
	err := &Error{Code: CodeInvalidState, Op: OpStart, InstanceID: "i-1", Message: "instance is stopping", Cause: errors.New("IncorrectInstanceState")}
	want := "Start: InvalidState (i-1): instance is stopping: IncorrectInstanceState"
	if err.Error() != want {
		t.Fatalf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestRetryable(t *testing.T) {
	cases := map[error]bool{
		nil:                     false,
		ErrThrottled:            true,
		ErrInternal:             true,
		errors.New("5xx"):       true,
		ErrNotFound:             false,
		ErrQuotaExceeded:        false,
		ErrInvalidState:         false,
		ErrUnauthorized:         false,
		ErrInvalidParameter:     false,
		context.Canceled:        true,
		ErrInsufficientCapacity: false,
	}
	for err, want := range cases {
		if got := IsRetryable(err); got != want {
			t.Errorf("IsRetryable(%v) = %v, want %v", err, got, want)
		}
	}
}

package clusterapi

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// classify turns an API server's refusal into a cloud error, so that the lifecycle
// controller backs off what will not change by itself (a forbidden call, an object the
// API server finds invalid) and retries the rest. An error that is already a cloud
// error, and nil, pass unchanged.
func classify(op, id string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*cloudprovider.Error); ok {
		return err
	}
	var code cloudprovider.ErrorCode
	switch {
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		code = cloudprovider.CodeUnauthorized
	case apierrors.IsTooManyRequests(err):
		code = cloudprovider.CodeThrottled
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		code = cloudprovider.CodeInvalidParameter
	case apierrors.IsNotFound(err) && op == cloudprovider.OpCreate:
		// What a launch writes into is missing: the class's namespace.
		code = cloudprovider.CodeInvalidParameter
	case apierrors.IsNotFound(err):
		code = cloudprovider.CodeNotFound
	default:
		code = cloudprovider.CodeInternal
	}
	return &cloudprovider.Error{Code: code, Op: op, InstanceID: id, Cause: err}
}

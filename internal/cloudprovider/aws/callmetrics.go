package aws

import (
	"context"
	"errors"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/stratos-sh/stratos/internal/metrics"
)

// Codes of stratos_aws_api_calls_total besides AWS's error codes.
const (
	callCodeOK = "OK"
	// callCodeNoResponse is a request AWS did not answer: no connection, a timeout, or
	// the caller gave up.
	callCodeNoResponse = "NoResponse"
)

// countAPICalls adds to a client's stack the middleware that counts each request in
// stratos_aws_api_calls_total by service, operation and result. It sits after the
// retryer, so that every attempt is counted, as AWS counts requests against its rate
// limits, with the code it was answered with (Throttling, RequestLimitExceeded...).
func countAPICalls(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("StratosCountAPICalls",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, metadata, err := next.HandleFinalize(ctx, in)
			metrics.AWSAPICalls.WithLabelValues(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), callCode(err)).Inc()
			return out, metadata, err
		}), middleware.After)
}

// callCode is the code of a request's result: OK, AWS's error code, or NoResponse.
func callCode(err error) string {
	if err == nil {
		return callCodeOK
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() != "" {
		return apiErr.ErrorCode()
	}
	return callCodeNoResponse
}

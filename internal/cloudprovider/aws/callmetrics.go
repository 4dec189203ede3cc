package aws

import (
	"context"
	"errors"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/stratos-sh/stratos/internal/metrics"
)

// callMetricsID names the middleware in the SDK's stacks.
const callMetricsID = "StratosCallMetrics"

// countCalls adds to a client's middleware stack a step that counts every request sent
// to AWS in stratos_aws_api_calls_total. It sits inside the retry loop, right after the
// SDK's retryer, so that each attempt counts: a throttled call the SDK retries twice
// shows as two RequestLimitExceeded and one OK, which is what the API's rate limits see.
func countCalls(stack *middleware.Stack) error {
	step := middleware.FinalizeMiddlewareFunc(callMetricsID, func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleFinalize(ctx, in)
		metrics.AWSAPICalls.WithLabelValues(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), resultCode(err)).Inc()
		return out, md, err
	})
	if _, ok := stack.Finalize.Get("Retry"); ok {
		return stack.Finalize.Insert(step, "Retry", middleware.After)
	}
	return stack.Finalize.Add(step, middleware.After)
}

// resultCode is OK, the AWS error code of an answered request, or RequestError when no
// answer came (a connection refused, a cancelled context).
func resultCode(err error) string {
	if err == nil {
		return "OK"
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() != "" {
		return apiErr.ErrorCode()
	}
	return "RequestError"
}

package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go/middleware"

	"github.com/stratos-sh/stratos/internal/version"
)

// Clients are the AWS service clients the provider uses.
type Clients struct {
	EC2     *ec2.Client
	SSM     *ssm.Client
	IAM     *iam.Client
	Pricing *pricing.Client
	EKS     *eks.Client
	// SQS reads the interruption queue (--interruption-queue).
	SQS *sqs.Client
	// Region the clients call.
	Region string
}

// pricingRegion is where the Pricing API is served; it answers for every region.
const pricingRegion = "us-east-1"

// NewClients loads credentials and region from the SDK's default chain (environment,
// IRSA or Pod Identity web identity, shared config, instance metadata), with the SDK's
// retryer in adaptive mode so that throttling slows every call down instead of failing
// it; out-of-capacity answers are not retried (capacityNotRetried). Every request is counted in stratos_aws_api_calls_total. A non-empty opts.Endpoint
// sends every service to that URL.
func NewClients(ctx context.Context, opts Options) (*Clients, error) {
	loadOpts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) {
				o.StandardOptions = append(o.StandardOptions, func(so *retry.StandardOptions) {
					so.Retryables = append([]retry.IsErrorRetryable{capacityNotRetried}, so.Retryables...)
				})
			})
		}),
		config.WithAppID("stratos-" + version.Version),
		config.WithAPIOptions([]func(*middleware.Stack) error{countAPICalls}),
	}
	if opts.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("no AWS region: set --aws-region or AWS_REGION")
	}
	endpoint := func(base **string) {
		if opts.Endpoint != "" {
			*base = aws.String(opts.Endpoint)
		}
	}
	return &Clients{
		EC2:     ec2.NewFromConfig(cfg, func(o *ec2.Options) { endpoint(&o.BaseEndpoint) }),
		SSM:     ssm.NewFromConfig(cfg, func(o *ssm.Options) { endpoint(&o.BaseEndpoint) }),
		IAM:     iam.NewFromConfig(cfg, func(o *iam.Options) { endpoint(&o.BaseEndpoint) }),
		EKS:     eks.NewFromConfig(cfg, func(o *eks.Options) { endpoint(&o.BaseEndpoint) }),
		SQS:     sqs.NewFromConfig(cfg, func(o *sqs.Options) { endpoint(&o.BaseEndpoint) }),
		Pricing: pricing.NewFromConfig(cfg, func(o *pricing.Options) { endpoint(&o.BaseEndpoint); o.Region = pricingRegion }),
		Region:  cfg.Region,
	}, nil
}

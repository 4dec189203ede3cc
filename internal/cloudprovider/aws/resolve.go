package aws

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Reasons an EC2NodeClass does not resolve, as its Ready condition and Events say them.
const (
	ReasonAMINotFound             = "AMINotFound"
	ReasonSubnetsNotFound         = "SubnetsNotFound"
	ReasonSecurityGroupsNotFound  = "SecurityGroupsNotFound"
	ReasonInstanceProfileNotFound = "InstanceProfileNotFound"
	// ReasonRoleNotFound: spec.role names no IAM role Stratos can add to its profile.
	ReasonRoleNotFound = "RoleNotFound"
	// ReasonInstanceProfileError: IAM refused to make or change the managed profile.
	ReasonInstanceProfileError = "InstanceProfileError"
	// ReasonAWSError: an AWS call failed (access denied, throttled, unreachable).
	ReasonAWSError = "AWSError"
)

// Part is a part of a node class that resolves on its own.
type Part string

// The parts of an EC2NodeClass, in the order they resolve.
const (
	PartAMIs            Part = "amis"
	PartSubnets         Part = "subnets"
	PartSecurityGroups  Part = "securityGroups"
	PartInstanceProfile Part = "instanceProfile"
)

// Failure says why one part of a node class did not resolve.
type Failure struct {
	Part Part
	// Reason is one of the Reason constants.
	Reason  string
	Message string
	// Transient failures (throttling, server errors, timeouts, lost connections, which
	// the SDK's retryer has already retried) say nothing about the class: what resolved
	// before still holds, and the resolution is tried again with backoff.
	Transient bool
}

func (f *Failure) Error() string { return fmt.Sprintf("%s: %s", f.Reason, f.Message) }

// Resolution is what an EC2NodeClass's selectors resolved to. A part that failed is
// empty and has its Failure.
type Resolution struct {
	AMIs            []v1beta1.ResolvedAMI
	Subnets         []v1beta1.ResolvedSubnet
	SecurityGroups  []v1beta1.ResolvedSecurityGroup
	InstanceProfile string
	// Failures, one per part that did not resolve, in the order of the parts.
	Failures []*Failure
}

// Failure returns the failure of part, or nil when it resolved.
func (r Resolution) Failure(part Part) *Failure {
	for _, f := range r.Failures {
		if f.Part == part {
			return f
		}
	}
	return nil
}

func (r *Resolution) fail(f *Failure) {
	if f != nil {
		r.Failures = append(r.Failures, f)
	}
}

// Resolver turns an EC2NodeClass's selectors into the images, subnets, security groups
// and instance profile its nodes launch with. It makes and removes the instance
// profiles of classes that name a role; everything else it only reads.
type Resolver struct {
	opts    Options
	clients *Clients
}

// NewResolver returns a resolver over clients. opts gives the cluster name (the managed
// instance profiles' names and tags), the Kubernetes version and the SSM root the
// image aliases are read under.
func NewResolver(opts Options, clients *Clients) *Resolver {
	return &Resolver{opts: opts.WithDefaults(), clients: clients}
}

// Resolve resolves every part of class, each on its own: a part that fails does not
// keep the others from resolving. For a class with spec.role it makes the managed
// instance profile, or gives it the role, when needed; the caller must have recorded
// that it may have to remove it (a finalizer) before.
func (r *Resolver) Resolve(ctx context.Context, class *v1beta1.EC2NodeClass) Resolution {
	var res Resolution
	var f *Failure
	res.AMIs, f = r.resolveAMIs(ctx, class.Spec.AMISelectorTerms, class.Spec.AMIFamily)
	res.fail(f)
	res.Subnets, f = r.resolveSubnets(ctx, class.Spec.SubnetSelectorTerms)
	res.fail(f)
	res.SecurityGroups, f = r.resolveSecurityGroups(ctx, class.Spec.SecurityGroupSelectorTerms)
	res.fail(f)
	res.InstanceProfile, f = r.resolveInstanceProfile(ctx, class)
	res.fail(f)
	return res
}

// retryables are the SDK's own tests of a retryable error; an error they pass is one
// the retryer gave up on, not one that says something about the class.
var retryables = retry.IsErrorRetryables(retry.DefaultRetryables)

// awsFailure is the failure of part after an AWS call failed while doing what: the
// service's own error code and message, transient when the SDK counts it retryable or
// the context ended.
func awsFailure(part Part, what string, err error) *Failure {
	f := &Failure{Part: part, Reason: ReasonAWSError, Message: what + ": " + errorMessage(err)}
	f.Transient = retryables.IsErrorRetryable(err) == aws.TrueTernary ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	return f
}

// errorCode is the AWS error code of err, or "".
func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// errorMessage is the AWS error code and message of err, or its text.
func errorMessage(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode() + ": " + apiErr.ErrorMessage()
	}
	return err.Error()
}

package runner

import (
	"context"
	"maps"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/stratos-sh/stratos/internal/sim/moto"
)

// TestRecordingProxy sends calls of the three protocols the operator uses through the
// proxy to moto: it counts them by service and action, and the failed ones by code.
func TestRecordingProxy(t *testing.T) {
	server := moto.StartT(t)
	target, err := url.Parse(server.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newRecordingProxy(target, 0)
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	endpoint := aws.String(front.URL)
	ctx := context.Background()

	ec2Client := ec2.New(ec2.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: endpoint, RetryMaxAttempts: 1})
	if _, err := ec2Client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ec2Client.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{"i-0000000000000000b", "i-0000000000000000a"}}); err == nil {
		t.Fatal("starting instances moto does not know succeeded")
	}
	ssmClient := ssm.New(ssm.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: endpoint, RetryMaxAttempts: 1})
	if _, err := ssmClient.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/sim/missing")}); err == nil {
		t.Fatal("reading a missing parameter succeeded")
	}
	iamClient := iam.New(iam.Options{Region: awsRegion, Credentials: motoCredentials, BaseEndpoint: endpoint, RetryMaxAttempts: 1})
	if _, err := iamClient.ListRoles(ctx, &iam.ListRolesInput{}); err != nil {
		t.Fatal(err)
	}

	calls, failures := proxy.counts()
	wantCalls := map[string]int{"ec2:DescribeInstances": 1, "ec2:StartInstances": 1, "ssm:GetParameter": 1, "iam:ListRoles": 1}
	if !maps.Equal(calls, wantCalls) {
		t.Errorf("calls %v, want %v", calls, wantCalls)
	}
	wantFailures := map[string]int{"ec2:StartInstances InvalidInstanceID.NotFound": 1, "ssm:GetParameter ParameterNotFound": 1}
	if !maps.Equal(failures, wantFailures) {
		t.Errorf("failures %v, want %v", failures, wantFailures)
	}
	starts := proxy.startCalls()
	if len(starts) != 1 || !slices.Equal(starts[0].ids, []string{"i-0000000000000000a", "i-0000000000000000b"}) {
		t.Errorf("start calls %+v, want the one call with its two instances", starts)
	}
}

package aws

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stratos-sh/stratos/internal/metrics"
)

// Every request the clients send is counted by service, operation and AWS's answer.
func TestAPICallsAreCounted(t *testing.T) {
	clients, _ := newTestClients(t)
	ctx := context.Background()
	calls := func(code string) float64 {
		return testutil.ToFloat64(metrics.AWSAPICalls.WithLabelValues("EC2", "DescribeInstanceTypes", code))
	}
	okBefore, badBefore := calls("OK"), calls("InvalidInstanceType")
	if _, err := clients.EC2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m5.large"}}); err != nil {
		t.Fatal(err)
	}
	_, err := clients.EC2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"x9.nosuch"}})
	if err == nil {
		t.Fatal("describing an instance type that does not exist did not fail")
	}
	if got := calls("OK") - okBefore; got != 1 {
		t.Errorf("%v successful calls counted, want 1", got)
	}
	if got := calls("InvalidInstanceType") - badBefore; got != 1 {
		t.Errorf("%v calls answered InvalidInstanceType counted, want 1 (the call failed with %v)", got, err)
	}
}

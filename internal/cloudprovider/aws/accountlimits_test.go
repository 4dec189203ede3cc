package aws

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// testCatalog is the EC2 provider with the test's instance types for a catalogue, so that
// launches through cloudprovider.New choose among them.
type testCatalog struct{ *Cloud }

func (c testCatalog) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	return c.launch(ctx, req, testInstanceTypes())
}

func (c testCatalog) InstanceTypes(context.Context, client.Object) ([]*cloudprovider.InstanceType, error) {
	return testInstanceTypes(), nil
}

// A fleet refused by the account's Spot vCPU limit (EC2 answers MaxSpotInstanceCountExceeded
// for each override) names the limit and the spot offerings it covers; the CloudProvider
// marks them, and the same launch asked again goes on demand, which moto launches. moto
// has no account limits of its own, so the proxy answers the spot fleet as EC2 does.
func launchSpotLimitFallsThroughToOnDemand(t *testing.T, e *ec2Env) {
	e.proxy.setFault(t, func(form url.Values) *ec2Fault {
		if form.Get("Action") != "CreateFleet" || form.Get("TargetCapacitySpecification.DefaultTargetCapacityType") != "spot" {
			return nil
		}
		var items strings.Builder
		for _, o := range formOverrides(form) {
			typ, subnet, _ := strings.Cut(o, " ")
			fmt.Fprintf(&items, `<item><launchTemplateAndOverrides><overrides><instanceType>%s</instanceType><subnetId>%s</subnetId></overrides></launchTemplateAndOverrides>`+
				`<lifecycle>spot</lifecycle><errorCode>MaxSpotInstanceCountExceeded</errorCode><errorMessage>Max spot instance count exceeded</errorMessage></item>`, typ, subnet)
		}
		return &ec2Fault{body: `<?xml version="1.0" encoding="UTF-8"?><CreateFleetResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">` +
			`<requestId>test-request-3</requestId><fleetId>fleet-2</fleetId><errorSet>` + items.String() + `</errorSet><fleetInstanceSet/></CreateFleetResponse>`}
	})
	provider := cloudprovider.New(testCatalog{e.cloud}, cloudprovider.DefaultBatchOptions, cloudprovider.NewUnavailableOfferings(0, nil))
	req := launchRequest(e, "spot-limit-1")
	req.Requirements = nil // spot or on demand

	_, err := provider.Create(context.Background(), req)
	var cloudErr *cloudprovider.Error
	if !errors.As(err, &cloudErr) || cloudErr.Code != cloudprovider.CodeQuotaExceeded || cloudErr.Limit != "MaxSpotInstanceCountExceeded" {
		t.Fatalf("the spot launch failed with %v; want QuotaExceeded naming MaxSpotInstanceCountExceeded", err)
	}
	if !strings.Contains(err.Error(), "spot vCPU limit of the Standard (A, C, D, H, I, M, R, T, Z) instance families") {
		t.Errorf("error %q does not say which limit", err)
	}
	inst, err := provider.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("the launch asked again: %v; want it on demand", err)
	}
	if inst.CapacityType != v1beta1.CapacityTypeOnDemand {
		t.Fatalf("launched %s, want on-demand outside the spot limit", inst.CapacityType)
	}
}

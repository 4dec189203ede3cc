package capiprovider_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Through cloudprovider.New, as the lifecycle controller calls it: Get of a Machine that
// is gone is ErrNotFound, of another cluster's ErrNotOwned, and a launch avoids the
// offerings marked unavailable, falling to the next cheapest.
func TestThroughCloudProvider(t *testing.T) {
	ctx := context.Background()
	unavailable := cloudprovider.NewUnavailableOfferings(cloudprovider.DefaultUnavailableOfferingTTL, nil)
	// Each Get below must see the Machine as it is now. The describe cache answers for up
	// to a second from an earlier call (internal/cloudprovider tests that), so it is off.
	opts := cloudprovider.DefaultBatchOptions
	opts.DescribeMaxAge = -1
	cloud := cloudprovider.New(provider, opts, unavailable)
	class := classOver(ref(machineTemplateKind, machineTemplate))

	unavailable.Mark(cloudprovider.OfferingKey{InstanceType: "small", Zone: "rack-a", CapacityType: v1beta1.CapacityTypeOnDemand}, "test")
	instance, err := cloud.Create(ctx, launchOf(class, "through-a", "default", "uid-through-a"))
	if err != nil {
		t.Fatal(err)
	}
	if instance.Type != "small" || instance.Zone != "rack-b" {
		t.Errorf("launched %s in %s, want small in rack-b: rack-a is marked unavailable", instance.Type, instance.Zone)
	}
	got, err := cloud.Get(ctx, instance.ID)
	if err != nil || got.ID != instance.ID {
		t.Fatalf("Get: %+v, %v", got, err)
	}

	m := machineOf(t, "through-a")
	m.Labels[v1beta1.TagCluster] = "another-cluster"
	if err := c.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := cloud.Get(ctx, instance.ID); !errors.Is(err, cloudprovider.ErrNotOwned) {
		t.Errorf("Get of another cluster's Machine: %v, want ErrNotOwned", err)
	}
	if err := c.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := cloud.Get(ctx, instance.ID); !errors.Is(err, cloudprovider.ErrNotFound) {
		t.Errorf("Get of a deleted Machine: %v, want ErrNotFound", err)
	}
}

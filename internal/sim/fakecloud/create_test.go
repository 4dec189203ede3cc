package fakecloud

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

func TestCreateIsIdempotentByToken(t *testing.T) {
	c, clk := newCloud(t, Options{})
	first := create(t, c, request("claim-uid"))
	again := create(t, c, request("claim-uid"))
	if again.ID != first.ID || len(c.Instances()) != 1 {
		t.Fatalf("second create launched %s next to %s", again.ID, first.ID)
	}

	if err := act(t, c.TerminateInstances, first.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.TerminateDelay)
	afterTermination := create(t, c, request("claim-uid"))
	if afterTermination.ID != first.ID || afterTermination.State != cloudprovider.StateTerminated {
		t.Fatalf("after termination, create returned %s in state %s", afterTermination.ID, afterTermination.State)
	}
	if n := len(c.Instances()); n != 1 {
		t.Fatalf("%d instances after repeated creates, want 1", n)
	}

	// Once the cloud forgets the instance it forgets the token too.
	clk.Step(time.Hour)
	if fresh := create(t, c, request("claim-uid")); fresh.ID == first.ID {
		t.Errorf("the token still returns the forgotten instance")
	}
	if got := c.Calls()[cloudprovider.OpCreate]; got != 4 {
		t.Errorf("Create calls = %d, want 4", got)
	}
}

func TestCreateInstanceFields(t *testing.T) {
	c, _ := newCloud(t, Options{})
	idPattern := regexp.MustCompile(`^i-[0-9a-f]{17}$`)
	ids, hostnames := map[string]bool{}, map[string]bool{}
	for n := range 300 {
		req := request(fmt.Sprintf("claim-%d", n))
		inst := create(t, c, req)
		req.Tags["mutated"] = "after the call"
		if !idPattern.MatchString(inst.ID) || ids[inst.ID] {
			t.Fatalf("bad or repeated ID %q", inst.ID)
		}
		ids[inst.ID] = true
		name := c.instances[inst.ID].hostname
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 || hostnames[name] {
			t.Fatalf("bad or repeated hostname %q: %v", name, errs)
		}
		hostnames[name] = true
		if n == 0 && name != "ip-10-0-1-4.fake.internal" {
			t.Errorf("first hostname = %q", name)
		}
		if inst.ProviderID != "fake:///"+inst.Zone+"/"+inst.ID {
			t.Errorf("providerID = %q", inst.ProviderID)
		}
		if !inst.LaunchTime.Equal(simtest.Epoch) || inst.Tags[v1beta1.TagCluster] != "test" {
			t.Errorf("launch time %s, tags %v", inst.LaunchTime, inst.Tags)
		}
		if stored := c.instances[inst.ID].Tags; stored["mutated"] != "" {
			t.Fatalf("the instance shares the request's tags")
		}
	}
}

func TestCreateChoosesCheapest(t *testing.T) {
	onDemand := corev1.NodeSelectorRequirement{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}}
	amd64 := corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}
	notZoneA := corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"fake-1a"}}
	tests := []struct {
		name         string
		class        *v1beta1.FakeNodeClass
		requirements []corev1.NodeSelectorRequirement
		requests     corev1.ResourceList
		wantType     string
		wantZone     string
	}{
		{name: "on-demand, ties to the first zone", requirements: []corev1.NodeSelectorRequirement{onDemand}, wantType: "c6g.large", wantZone: "fake-1a"},
		{name: "amd64", requirements: []corev1.NodeSelectorRequirement{onDemand, amd64}, wantType: "c5.large", wantZone: "fake-1a"},
		{name: "zone requirement", requirements: []corev1.NodeSelectorRequirement{onDemand, notZoneA}, wantType: "c6g.large", wantZone: "fake-1b"},
		{name: "cpu needs an xlarge", requirements: []corev1.NodeSelectorRequirement{onDemand},
			requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}, wantType: "c6g.xlarge", wantZone: "fake-1a"},
		{name: "memory needs an r5", requirements: []corev1.NodeSelectorRequirement{onDemand, amd64},
			requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("14Gi")}, wantType: "r5.large", wantZone: "fake-1a"},
		{name: "pods need a 4xlarge", requirements: []corev1.NodeSelectorRequirement{onDemand},
			requests: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("100")}, wantType: "c6g.4xlarge", wantZone: "fake-1a"},
		{name: "class types and zones", requirements: []corev1.NodeSelectorRequirement{onDemand},
			class:    &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"r5.large", "m5.large"}, Zones: []string{"fake-1c"}}},
			wantType: "m5.large", wantZone: "fake-1c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCloud(t, Options{})
			req := request("a")
			req.NodeClass, req.Requirements, req.Requests = tt.class, tt.requirements, tt.requests
			inst := create(t, c, req)
			if inst.Type != tt.wantType || inst.Zone != tt.wantZone || inst.CapacityType != v1beta1.CapacityTypeOnDemand {
				t.Errorf("launched %s %s in %s, want %s on-demand in %s", inst.Type, inst.CapacityType, inst.Zone, tt.wantType, tt.wantZone)
			}
		})
	}
}

func TestCreateChoosesCheapestSpot(t *testing.T) {
	c, _ := newCloud(t, Options{})
	inst := create(t, c, request("a"))
	var cheapest float64
	for _, it := range c.catalog {
		for _, o := range it.Offerings {
			if cheapest == 0 || o.PricePerHour < cheapest {
				cheapest = o.PricePerHour
			}
		}
	}
	it := c.instances[inst.ID].instanceType
	if o, _ := it.Cheapest(func(o cloudprovider.Offering) bool { return o.Zone == inst.Zone && o.CapacityType == inst.CapacityType }); o.PricePerHour != cheapest {
		t.Errorf("launched %s %s in %s at $%.4f, the cheapest offering is $%.4f", inst.Type, inst.CapacityType, inst.Zone, o.PricePerHour, cheapest)
	}
	if inst.CapacityType != v1beta1.CapacityTypeSpot || inst.Architecture != "arm64" {
		t.Errorf("launched %s %s %s", inst.Type, inst.CapacityType, inst.Architecture)
	}
}

func TestCreateInsufficientCapacity(t *testing.T) {
	class := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"c6g.large"}}}
	class.Name = "small"

	t.Run("nothing satisfies the request", func(t *testing.T) {
		c, _ := newCloud(t, Options{})
		req := request("a")
		req.NodeClass = class
		req.Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		_, err := c.Create(context.Background(), req)
		wantCode(t, err, cloudprovider.CodeInsufficientCapacity)
		if !strings.Contains(err.Error(), "no instance type of node class small satisfies the requirements and requests") {
			t.Errorf("message: %v", err)
		}
	})
	t.Run("everything suitable is out of capacity", func(t *testing.T) {
		c, _ := newCloud(t, Options{})
		c.SetFaults(Faults{InsufficientCapacity: []Offering{{Zone: "fake-1a"}, {Zone: "fake-1b"}}})
		outOfC := class.DeepCopy()
		outOfC.Spec.Faults = &v1beta1.FakeFaults{InsufficientCapacity: []v1beta1.FakeOffering{{InstanceType: "c6g.large", Zone: "fake-1c"}}}
		req := request("a")
		req.NodeClass = outOfC
		_, err := c.Create(context.Background(), req)
		wantCode(t, err, cloudprovider.CodeInsufficientCapacity)
		if !strings.Contains(err.Error(), "all 6 offerings of node class small that satisfy the requirements and requests are out of capacity: "+
			"c6g.large on-demand in fake-1a, c6g.large spot in fake-1a, c6g.large on-demand in fake-1b, c6g.large spot in fake-1b, "+
			"c6g.large on-demand in fake-1c and 1 more") {
			t.Errorf("message: %v", err)
		}
		var refused []cloudprovider.OfferingKey
		for _, zone := range []string{"fake-1a", "fake-1b", "fake-1c"} {
			for _, capacityType := range []string{v1beta1.CapacityTypeOnDemand, v1beta1.CapacityTypeSpot} {
				refused = append(refused, cloudprovider.OfferingKey{InstanceType: "c6g.large", Zone: zone, CapacityType: capacityType})
			}
		}
		wantOfferings(t, err, refused)
		// Without the class's own fault, fake-1c still has capacity.
		req.NodeClass = class
		if inst := create(t, c, req); inst.Zone != "fake-1c" {
			t.Errorf("launched in %s, want fake-1c", inst.Zone)
		}
	})
}

// A launch passes over the offerings the faults put out of capacity, as a fleet falls
// through its overrides, and those the request says are unavailable; when none is left,
// the error names only those the faults refused, not those the caller knew of already.
func TestCreateSkipsOfferingsOutOfCapacity(t *testing.T) {
	class := &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"m5.large"}}}
	class.Name = "one-type"
	onDemand := corev1.NodeSelectorRequirement{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}}
	key := func(zone string) cloudprovider.OfferingKey {
		return cloudprovider.OfferingKey{InstanceType: "m5.large", Zone: zone, CapacityType: v1beta1.CapacityTypeOnDemand}
	}
	newRequest := func(token string, unavailable ...cloudprovider.OfferingKey) *cloudprovider.CreateRequest {
		req := request(token)
		req.NodeClass, req.Requirements, req.Unavailable = class, []corev1.NodeSelectorRequirement{onDemand}, unavailable
		return req
	}
	c, _ := newCloud(t, Options{})
	// On demand, m5.large costs the same in every zone; ties go to the first zone.
	if inst := create(t, c, newRequest("a")); inst.Zone != "fake-1a" {
		t.Fatalf("launched in %s, want fake-1a", inst.Zone)
	}

	c.SetFaults(Faults{InsufficientCapacity: []Offering{{Zone: "fake-1a"}}})
	if inst := create(t, c, newRequest("b")); inst.Zone != "fake-1b" {
		t.Errorf("with fake-1a out of capacity, launched in %s, want fake-1b", inst.Zone)
	}
	if inst := create(t, c, newRequest("c", key("fake-1b"))); inst.Zone != "fake-1c" {
		t.Errorf("with fake-1a out of capacity and fake-1b unavailable to the caller, launched in %s, want fake-1c", inst.Zone)
	}

	_, err := c.Create(context.Background(), newRequest("d", key("fake-1b"), key("fake-1c")))
	wantCode(t, err, cloudprovider.CodeInsufficientCapacity)
	if !strings.Contains(err.Error(), "all 3 offerings of node class one-type that satisfy the requirements and requests are out of capacity: "+
		"m5.large on-demand in fake-1a, m5.large on-demand in fake-1b, m5.large on-demand in fake-1c (2 of them marked unavailable by the caller)") {
		t.Errorf("message: %v", err)
	}
	wantOfferings(t, err, []cloudprovider.OfferingKey{key("fake-1a")})

	c.SetFaults(Faults{})
	_, err = c.Create(context.Background(), newRequest("e", key("fake-1a"), key("fake-1b"), key("fake-1c")))
	wantCode(t, err, cloudprovider.CodeInsufficientCapacity)
	wantOfferings(t, err, nil)
}

func TestCreateRejectsOtherNodeClasses(t *testing.T) {
	c, _ := newCloud(t, Options{})
	req := request("a")
	req.NodeClass = &v1beta1.EC2NodeClass{}
	if _, err := c.Create(context.Background(), req); err == nil || !strings.Contains(err.Error(), "not a FakeNodeClass") {
		t.Errorf("error = %v", err)
	}
	var typedNil *v1beta1.FakeNodeClass
	req.NodeClass = typedNil
	create(t, c, req)
}

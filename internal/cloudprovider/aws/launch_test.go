package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	gocmp "github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// The launch tests share one moto; each launches for claims of its own.
func TestLaunch(t *testing.T) {
	e := newEC2Env(t)
	for _, tc := range []struct {
		name string
		test func(*testing.T, *ec2Env)
	}{
		{"TagsInstanceVolumeAndNetworkInterface", launchTagsInstanceVolumeAndNetworkInterface},
		{"TemplateCarriesTheNodeClassAndUserData", launchTemplateCarriesTheNodeClassAndUserData},
		{"IsIdempotent", launchIsIdempotent},
		{"SpotWhenAllowed", launchSpotWhenAllowed},
		{"RequirementsPickTheZone", launchRequirementsPickTheZone},
		{"CapacityErrorsNameTheOfferings", launchCapacityErrorsNameTheOfferings},
		{"SpotLimitFallsThroughToOnDemand", launchSpotLimitFallsThroughToOnDemand},
		{"UnauthorizedIsReadable", launchUnauthorizedIsReadable},
		{"RefusesAnUnresolvedNodeClass", launchRefusesAnUnresolvedNodeClass},
		{"TemplateDeletedOutsideIsMadeAgain", launchTemplateDeletedOutsideIsMadeAgain},
		{"TemplatePerKubeletConfiguration", launchTemplatePerKubeletConfiguration},
		{"BurstOfFifty", burstOfFifty},
		{"FromTheCatalog", launchFromTheCatalog},
		{"CustomImageDeclaredBottlerocket", launchCustomImageDeclaredBottlerocket},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, e) })
	}
}

// launchRequest is a claim's launch on demand, as the nodeclaim controller builds it.
func launchRequest(e *ec2Env, claim string) *cloudprovider.CreateRequest {
	return &cloudprovider.CreateRequest{
		ClientToken:  "uid-" + claim,
		NodeClass:    e.class,
		Requirements: []corev1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}}},
		Requests:     corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		Labels:       map[string]string{v1beta1.LabelNodePool: "default", v1beta1.LabelNodeClaim: claim},
		Taints:       []corev1.Taint{v1beta1.StandbyTaint, {Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
		Tags:         map[string]string{v1beta1.TagCluster: testCluster, v1beta1.TagNodePool: "default", v1beta1.TagNodeClaim: claim},
	}
}

// wantTags are the tags of the instance of claim launched from e.class.
func wantTags(claim string) map[string]string {
	return map[string]string{
		v1beta1.TagCluster: testCluster, v1beta1.TagNodePool: "default", v1beta1.TagNodeClaim: claim,
		"kubernetes.io/cluster/" + testCluster: "owned", "Name": claim, "team": "platform",
	}
}

// createFleetForm is the form of the only CreateFleet request among forms.
func createFleetForm(t *testing.T, forms []url.Values) url.Values {
	t.Helper()
	var found []url.Values
	for _, f := range forms {
		if f.Get("Action") == "CreateFleet" {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d CreateFleet requests, want 1", len(found))
	}
	return found[0]
}

// formTagSpecifications reads the TagSpecification.N of a form: resource type → tags.
func formTagSpecifications(form url.Values) map[string]map[string]string {
	out := map[string]map[string]string{}
	for n := 1; form.Get(fmt.Sprintf("TagSpecification.%d.ResourceType", n)) != ""; n++ {
		tags := map[string]string{}
		for m := 1; ; m++ {
			key := form.Get(fmt.Sprintf("TagSpecification.%d.Tag.%d.Key", n, m))
			if key == "" {
				break
			}
			tags[key] = form.Get(fmt.Sprintf("TagSpecification.%d.Tag.%d.Value", n, m))
		}
		out[form.Get(fmt.Sprintf("TagSpecification.%d.ResourceType", n))] = tags
	}
	return out
}

var overrideKey = regexp.MustCompile(`^LaunchTemplateConfigs\.(\d+)\.Overrides\.(\d+)\.InstanceType$`)

// formOverrides reads the overrides of a CreateFleet form as "type subnet" strings.
func formOverrides(form url.Values) []string {
	var out []string
	for key := range form {
		if m := overrideKey.FindStringSubmatch(key); m != nil {
			prefix := fmt.Sprintf("LaunchTemplateConfigs.%s.Overrides.%s.", m[1], m[2])
			out = append(out, form.Get(prefix+"InstanceType")+" "+form.Get(prefix+"SubnetId"))
		}
	}
	sort.Strings(out)
	return out
}

func launchTagsInstanceVolumeAndNetworkInterface(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	mark := e.proxy.mark()
	inst, err := e.cloud.launch(ctx, launchRequest(e, "tags-1"), testInstanceTypes())
	if err != nil {
		t.Fatal(err)
	}
	// The cheapest on-demand offering is m6g.large, an arm64 type, and moto launches the
	// first override, the cheapest zone's by name. The instance holds the class's
	// instance profile, which its claim records.
	want := cloudprovider.Instance{
		ID: inst.ID, ProviderID: "aws:///us-east-1a/" + inst.ID, Type: "m6g.large", ImageID: e.amis["arm64"], InstanceProfile: e.class.Status.InstanceProfile, Zone: zoneA,
		CapacityType: v1beta1.CapacityTypeOnDemand, Architecture: "arm64", State: cloudprovider.StatePending, Tags: wantTags("tags-1"),
	}
	got := *inst
	got.LaunchTime = want.LaunchTime
	if diff := gocmp.Diff(want, got); !strings.HasPrefix(got.ID, "i-") || diff != "" {
		t.Fatalf("launched %s (-want +got):\n%s", got.ID, diff)
	}

	out, err := e.clients.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{inst.ID}})
	if err != nil {
		t.Fatal(err)
	}
	described := out.Reservations[0].Instances[0]
	if tags := tagMap(described.Tags); !maps.Equal(tags, wantTags("tags-1")) {
		t.Fatalf("instance tags %v, want %v", tags, wantTags("tags-1"))
	}
	if aws.ToString(described.SubnetId) != e.subnets[zoneA] || aws.ToString(described.ImageId) != e.amis["arm64"] {
		t.Fatalf("instance in subnet %s from image %s", aws.ToString(described.SubnetId), aws.ToString(described.ImageId))
	}

	// moto tags only the instance of a fleet; the request is what EC2 tags the volumes
	// and network interfaces from. Both exist, and the request carries their tags.
	volumes, err := e.clients.EC2.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{Filters: []types.Filter{{Name: aws.String("attachment.instance-id"), Values: []string{inst.ID}}}})
	if err != nil || len(volumes.Volumes) == 0 {
		t.Fatalf("volumes of the instance: %v, %v", volumes, err)
	}
	interfaces, err := e.clients.EC2.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []types.Filter{{Name: aws.String("attachment.instance-id"), Values: []string{inst.ID}}}})
	if err != nil || len(interfaces.NetworkInterfaces) == 0 {
		t.Fatalf("network interfaces of the instance: %v, %v", interfaces, err)
	}
	form := createFleetForm(t, e.proxy.since(mark))
	specs := formTagSpecifications(form)
	for _, resource := range []string{"instance", "volume", "network-interface", "fleet"} {
		if !maps.Equal(specs[resource], wantTags("tags-1")) {
			t.Fatalf("CreateFleet tags %s with %v, want %v", resource, specs[resource], wantTags("tags-1"))
		}
	}
	for key, want := range map[string]string{
		"Type": "instant",
		"TargetCapacitySpecification.TotalTargetCapacity":       "1",
		"TargetCapacitySpecification.DefaultTargetCapacityType": "on-demand",
		"OnDemandOptions.AllocationStrategy":                    "lowest-price",
	} {
		if form.Get(key) != want {
			t.Fatalf("CreateFleet %s = %q, want %q", key, form.Get(key), want)
		}
	}
	if token := form.Get("ClientToken"); !strings.HasPrefix(token, "uid-tags-1-") || len(token) > 64 {
		t.Fatalf("ClientToken %q: want the claim's token and a digest, at most 64 characters", token)
	}
	// Every on-demand type × both zones, each type with its architecture's image.
	var wantOverrides []string
	for _, typ := range []string{"m5.large", "m5.xlarge", "m6g.large"} {
		for _, zone := range []string{zoneA, zoneB} {
			wantOverrides = append(wantOverrides, typ+" "+e.subnets[zone])
		}
	}
	sort.Strings(wantOverrides)
	if got := formOverrides(form); !slices.Equal(got, wantOverrides) {
		t.Fatalf("overrides %v, want %v", got, wantOverrides)
	}
}

// A launch redone for the same claim returns the instance the first made, with one
// describe; a provider that starts afresh finds the template made already.
func launchIsIdempotent(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	first, err := e.cloud.launch(ctx, launchRequest(e, "again-1"), testInstanceTypes())
	if err != nil {
		t.Fatal(err)
	}
	before := awsCalls(t)
	second, err := e.cloud.launch(ctx, launchRequest(e, "again-1"), testInstanceTypes())
	if err != nil {
		t.Fatal(err)
	}
	_, calls := callsSince(t, before)
	if second.ID != first.ID {
		t.Fatalf("the same claim launched %s, then %s", first.ID, second.ID)
	}
	wantCalls(t, "the repeated launch", calls, map[string]int{"DescribeInstances": 1})
	list, err := e.cloud.ListInstances(ctx, map[string]string{v1beta1.TagNodeClaim: "again-1"})
	if err != nil || len(list) != 1 {
		t.Fatalf("instances of the claim: %v, %v; want one", list, err)
	}

	// A restarted provider knows no template; the same content's is there already.
	restarted := New(Options{ClusterName: testCluster}, e.clients)
	req := launchRequest(e, "again-2")
	req.Labels = launchRequest(e, "again-1").Labels // the same user data, so the same template
	before = awsCalls(t)
	if _, err := restarted.launch(ctx, req, testInstanceTypes()); err != nil {
		t.Fatal(err)
	}
	byCode, calls := callsSince(t, before)
	wantCalls(t, "a launch of a known template by a new provider", calls, map[string]int{"DescribeInstances": 1, "CreateLaunchTemplate": 1, "CreateFleet": 1})
	if byCode["CreateLaunchTemplate InvalidLaunchTemplateName.AlreadyExistsException"] != 1 {
		t.Fatalf("calls %v: want the template found in use", byCode)
	}
	// The provider remembers them now.
	req = launchRequest(e, "again-3")
	req.Labels = launchRequest(e, "again-1").Labels
	before = awsCalls(t)
	if _, err := restarted.launch(ctx, req, testInstanceTypes()); err != nil {
		t.Fatal(err)
	}
	_, calls = callsSince(t, before)
	wantCalls(t, "a launch of a known template", calls, map[string]int{"DescribeInstances": 1, "CreateFleet": 1})
}

func launchSpotWhenAllowed(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	req := launchRequest(e, "spot-1")
	req.Requirements = nil
	mark := e.proxy.mark()
	inst, err := e.cloud.launch(ctx, req, testInstanceTypes())
	if err != nil {
		t.Fatal(err)
	}
	if inst.CapacityType != v1beta1.CapacityTypeSpot {
		t.Fatalf("launched %s, want spot", inst.CapacityType)
	}
	form := createFleetForm(t, e.proxy.since(mark))
	if form.Get("SpotOptions.AllocationStrategy") != "price-capacity-optimized" || form.Get("TargetCapacitySpecification.DefaultTargetCapacityType") != "spot" {
		t.Fatalf("CreateFleet asked %v", form)
	}
	found, err := e.cloud.DescribeInstances(ctx, []string{inst.ID})
	if err != nil || found[inst.ID].CapacityType != v1beta1.CapacityTypeSpot {
		t.Fatalf("EC2 describes %+v, %v; want a spot instance", found[inst.ID], err)
	}
}

func launchRequirementsPickTheZone(t *testing.T, e *ec2Env) {
	req := launchRequest(e, "zone-1")
	req.Requirements = append(req.Requirements, corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zoneB}})
	mark := e.proxy.mark()
	inst, err := e.cloud.launch(context.Background(), req, testInstanceTypes())
	if err != nil {
		t.Fatal(err)
	}
	if inst.Zone != zoneB || inst.ProviderID != "aws:///us-east-1b/"+inst.ID {
		t.Fatalf("launched in %s (%s), want %s", inst.Zone, inst.ProviderID, zoneB)
	}
	for _, o := range formOverrides(createFleetForm(t, e.proxy.since(mark))) {
		if !strings.HasSuffix(o, e.subnets[zoneB]) {
			t.Fatalf("override %q is outside %s", o, zoneB)
		}
	}
}

// An instant fleet that launched nothing for lack of capacity answers an error per
// override; the error names every offering, for the caller to mark unavailable.
func launchCapacityErrorsNameTheOfferings(t *testing.T, e *ec2Env) {
	e.proxy.setFault(t, func(form url.Values) *ec2Fault {
		if form.Get("Action") != "CreateFleet" {
			return nil
		}
		var items strings.Builder
		for _, o := range formOverrides(form) {
			typ, subnet, _ := strings.Cut(o, " ")
			fmt.Fprintf(&items, `<item><launchTemplateAndOverrides><overrides><instanceType>%s</instanceType><subnetId>%s</subnetId></overrides></launchTemplateAndOverrides>`+
				`<lifecycle>on-demand</lifecycle><errorCode>InsufficientInstanceCapacity</errorCode><errorMessage>We currently do not have sufficient %s capacity.</errorMessage></item>`, typ, subnet, typ)
		}
		return &ec2Fault{body: `<?xml version="1.0" encoding="UTF-8"?><CreateFleetResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">` +
			`<requestId>test-request-2</requestId><fleetId>fleet-1</fleetId><errorSet>` + items.String() + `</errorSet><fleetInstanceSet/></CreateFleetResponse>`}
	})
	_, err := e.cloud.launch(context.Background(), launchRequest(e, "capacity-1"), testInstanceTypes())
	var cloudErr *cloudprovider.Error
	if !errors.As(err, &cloudErr) || cloudErr.Code != cloudprovider.CodeInsufficientCapacity {
		t.Fatalf("launch error %v, want InsufficientCapacity", err)
	}
	var want []cloudprovider.OfferingKey
	for _, typ := range []string{"m5.large", "m5.xlarge", "m6g.large"} {
		for _, zone := range []string{zoneA, zoneB} {
			want = append(want, cloudprovider.OfferingKey{InstanceType: typ, Zone: zone, CapacityType: v1beta1.CapacityTypeOnDemand})
		}
	}
	got := slices.SortedFunc(slices.Values(cloudErr.Offerings), func(a, b cloudprovider.OfferingKey) int { return strings.Compare(a.String(), b.String()) })
	if !slices.Equal(got, want) {
		t.Fatalf("offerings %v, want %v", got, want)
	}
	if !strings.Contains(err.Error(), "InsufficientInstanceCapacity") {
		t.Fatalf("error %q does not say what EC2 answered", err)
	}
}

func launchUnauthorizedIsReadable(t *testing.T, e *ec2Env) {
	e.proxy.setFault(t, func(form url.Values) *ec2Fault {
		if form.Get("Action") != "CreateFleet" {
			return nil
		}
		return &ec2Fault{status: http.StatusForbidden, code: "UnauthorizedOperation", message: "You are not authorized to perform this operation. User: arn:aws:sts::123456789012:assumed-role/stratos is not authorized to perform: ec2:CreateFleet. Encoded authorization failure message: ZW5jb2RlZA"}
	})
	_, err := e.cloud.launch(context.Background(), launchRequest(e, "unauthorized-1"), testInstanceTypes())
	if !errors.Is(err, cloudprovider.ErrUnauthorized) {
		t.Fatalf("launch error %v, want Unauthorized", err)
	}
	for _, want := range []string{"not allowed to call ec2:CreateFleet", "assumed-role/stratos", "ZW5jb2RlZA", "aws sts decode-authorization-message"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
}

func launchRefusesAnUnresolvedNodeClass(t *testing.T, e *ec2Env) {
	req := launchRequest(e, "unresolved-1")
	class := e.class.DeepCopy()
	class.Status.Subnets, class.Status.InstanceProfile = nil, ""
	req.NodeClass = class
	before := awsCalls(t)
	_, err := e.cloud.launch(context.Background(), req, testInstanceTypes())
	_, calls := callsSince(t, before)
	if !errors.Is(err, cloudprovider.ErrInvalidParameter) || !strings.Contains(err.Error(), "subnets, instance profile") {
		t.Fatalf("launch error %v, want InvalidParameter naming what is missing", err)
	}
	wantCalls(t, "a launch of an unresolved node class", calls, map[string]int{})
}

// Create launches among the instance types the catalogue describes from EC2.
func launchFromTheCatalog(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	allowed := []string{"m5.large", "m5.xlarge", "m6g.large", "c6g.large"}
	req := launchRequest(e, "catalog-1")
	req.Requirements = append(req.Requirements, corev1.NodeSelectorRequirement{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: allowed})
	types, err := e.cloud.InstanceTypes(ctx, e.class)
	if err != nil {
		t.Fatal(err)
	}
	archOf := map[string]string{}
	for _, it := range types {
		archOf[it.Name] = it.Architecture
	}
	mark := e.proxy.mark()
	inst, err := e.cloud.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(allowed, inst.Type) || inst.CapacityType != v1beta1.CapacityTypeOnDemand ||
		(inst.Zone != zoneA && inst.Zone != zoneB) || inst.Architecture != archOf[inst.Type] || inst.ImageID != e.amis[inst.Architecture] {
		t.Fatalf("launched %+v: want an on-demand %v in a subnet's zone from the image of its architecture", inst, allowed)
	}
	overrides := formOverrides(createFleetForm(t, e.proxy.since(mark)))
	if len(overrides) != 2*len(allowed) {
		t.Fatalf("overrides %v, want the %d allowed types in both zones", overrides, len(allowed))
	}
	for _, o := range overrides {
		if !slices.Contains(allowed, strings.Fields(o)[0]) {
			t.Fatalf("override %q of a type not allowed", o)
		}
	}
	// The catalogue answers the next launch from what it holds, and the pool's template
	// serves the next claim too.
	before := awsCalls(t)
	if _, err := e.cloud.Create(ctx, launchRequest(e, "catalog-2")); err != nil {
		t.Fatal(err)
	}
	_, calls := callsSince(t, before)
	wantCalls(t, "a launch with the catalogue loaded", calls, map[string]int{"DescribeInstances": 1, "CreateFleet": 1})
}

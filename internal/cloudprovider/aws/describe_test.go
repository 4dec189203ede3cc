package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	gocmp "github.com/google/go-cmp/cmp"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// The describe tests share one moto; each tags its instances with a pool of its own.
func TestDescribe(t *testing.T) {
	e := newEC2Env(t)
	for _, tc := range []struct {
		name string
		test func(*testing.T, *ec2Env)
	}{
		{"ConvertsEveryField", describeConvertsEveryField},
		{"PaginatesPastOnePage", describePaginatesPastOnePage},
		{"BatchesIDs", describeBatchesIDs},
		{"ListByTagsExcludesOtherClustersAndTerminated", listByTagsExcludesOtherClustersAndTerminated},
		{"InstanceWithoutTheTagIsNotOwnedNotGone", instanceWithoutTheTagIsNotOwnedNotGone},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, e) })
	}
}

func describeConvertsEveryField(t *testing.T, e *ec2Env) {
	tags := ours("fields")
	started := time.Now().Add(-time.Minute)
	onDemand := e.runInstances(t, 1, "m5.large", zoneB, tags)[0]
	spot := e.runInstances(t, 1, "m6g.large", zoneA, tags, func(in *ec2.RunInstancesInput) {
		in.ImageId = aws.String(e.amis["arm64"])
		in.InstanceMarketOptions = &types.InstanceMarketOptionsRequest{MarketType: types.MarketTypeSpot}
	})[0]
	found, err := e.cloud.DescribeInstances(context.Background(), []string{onDemand, spot, neverExisted})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 {
		t.Fatalf("described %v, want the two instances and not %s", slices.Collect(maps.Keys(found)), neverExisted)
	}
	for _, want := range []cloudprovider.Instance{
		{ID: onDemand, ProviderID: "aws:///us-east-1b/" + onDemand, Type: "m5.large", ImageID: e.amis["amd64"], Zone: zoneB,
			CapacityType: v1beta1.CapacityTypeOnDemand, Architecture: "amd64", State: cloudprovider.StateRunning, Tags: tags},
		{ID: spot, ProviderID: "aws:///us-east-1a/" + spot, Type: "m6g.large", ImageID: e.amis["arm64"], Zone: zoneA,
			CapacityType: v1beta1.CapacityTypeSpot, Architecture: "arm64", State: cloudprovider.StateRunning, Tags: tags},
	} {
		got := *found[want.ID]
		if got.LaunchTime.Before(started) {
			t.Fatalf("instance %s launched at %s, before the test", want.ID, got.LaunchTime)
		}
		got.LaunchTime = time.Time{}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Fatalf("described instance %s (-want +got):\n%s", want.ID, diff)
		}
	}
}

// Pages of five: twelve instances, each in a reservation of its own, take three.
func describePaginatesPastOnePage(t *testing.T, e *ec2Env) {
	defer func(size int32) { instancePageSize = size }(instancePageSize)
	instancePageSize = 5
	ids := e.runInstances(t, 12, "m5.large", zoneA, ours("pages"))

	before := awsCalls(t)
	found, err := e.cloud.DescribeInstances(context.Background(), append(slices.Clone(ids), neverExisted))
	if err != nil {
		t.Fatal(err)
	}
	_, calls := callsSince(t, before)
	if got := slices.Sorted(maps.Keys(found)); !slices.Equal(got, slices.Sorted(slices.Values(ids))) {
		t.Fatalf("described %v, want %v", got, ids)
	}
	wantCalls(t, "describe of 12 in pages of 5", calls, map[string]int{"DescribeInstances": 3})

	before = awsCalls(t)
	list, err := e.cloud.ListInstances(context.Background(), map[string]string{v1beta1.TagNodePool: "pages"})
	if err != nil {
		t.Fatal(err)
	}
	_, calls = callsSince(t, before)
	if len(list) != 12 {
		t.Fatalf("listed %d instances, want 12", len(list))
	}
	wantCalls(t, "list of 12 in pages of 5", calls, map[string]int{"DescribeInstances": 3})
}

// EC2 takes 200 values per filter: 450 IDs take three calls.
func describeBatchesIDs(t *testing.T, e *ec2Env) {
	known := e.runInstances(t, 3, "m5.large", zoneA, ours("batches"))
	ids := slices.Clone(known)
	for i := len(ids); i < 450; i++ {
		ids = append(ids, fmt.Sprintf("i-%017x", i))
	}
	before := awsCalls(t)
	found, err := e.cloud.DescribeInstances(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	_, calls := callsSince(t, before)
	if got := slices.Sorted(maps.Keys(found)); !slices.Equal(got, slices.Sorted(slices.Values(known))) {
		t.Fatalf("described %v, want %v", got, known)
	}
	wantCalls(t, "describe of 450 IDs", calls, map[string]int{"DescribeInstances": 3})
}

func listByTagsExcludesOtherClustersAndTerminated(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	running := e.runInstances(t, 2, "m5.large", zoneA, ours("list-a"))
	stopped := e.runInstances(t, 1, "m5.large", zoneB, ours("list-a"))
	terminated := e.runInstances(t, 1, "m5.large", zoneA, ours("list-a"))
	otherPool := e.runInstances(t, 1, "m5.large", zoneA, ours("list-b"))
	e.runInstances(t, 1, "m5.large", zoneA, map[string]string{v1beta1.TagCluster: "other-cluster", v1beta1.TagNodePool: "list-a"})
	if _, err := e.clients.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: stopped}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.clients.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: terminated}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		tags map[string]string
		want []string
	}{
		{map[string]string{v1beta1.TagNodePool: "list-a"}, slices.Concat(running, stopped)},
		{map[string]string{v1beta1.TagNodePool: "list-b"}, otherPool},
		{map[string]string{v1beta1.TagCluster: "other-cluster", v1beta1.TagNodePool: "list-a"}, nil},
	} {
		list, err := e.cloud.ListInstances(ctx, tc.tags)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, inst := range list {
			got = append(got, inst.ID)
		}
		if want := slices.Sorted(slices.Values(tc.want)); !slices.Equal(got, want) {
			t.Fatalf("ListInstances(%v) = %v, want %v (by ID)", tc.tags, got, want)
		}
	}
}

// An instance whose cluster tag someone removed, or that carries another cluster's, is
// described as not owned rather than left out as unknown, in the same one call; an ID
// EC2 never handed out is still absent. Through the CloudProvider, Get answers NotOwned
// for it, and a termination refuses it without a TerminateInstances call, so that it
// runs on as it was.
func instanceWithoutTheTagIsNotOwnedNotGone(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	ids := e.runInstances(t, 3, "m5.large", zoneA, ours("untagged"))
	kept, untagged, renamed := ids[0], ids[1], ids[2]
	if _, err := e.clients.EC2.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{untagged}, Tags: []types.Tag{{Key: aws.String(v1beta1.TagCluster)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.clients.EC2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{renamed}, Tags: ec2Tags(map[string]string{v1beta1.TagCluster: "renamed"})}); err != nil {
		t.Fatal(err)
	}

	before := awsCalls(t)
	found, err := e.cloud.DescribeInstances(ctx, []string{kept, untagged, renamed, neverExisted})
	if err != nil {
		t.Fatal(err)
	}
	_, calls := callsSince(t, before)
	wantCalls(t, "describe", calls, map[string]int{"DescribeInstances": 1})
	if _, ok := found[neverExisted]; ok || len(found) != 3 {
		t.Fatalf("described %v, want the three instances and not %s", slices.Collect(maps.Keys(found)), neverExisted)
	}
	for id, want := range map[string]bool{kept: false, untagged: true, renamed: true} {
		if got := found[id]; got.NotOwned != want || got.State != cloudprovider.StateRunning {
			t.Errorf("instance %s: NotOwned %v, state %s; want NotOwned %v, running", id, got.NotOwned, got.State, want)
		}
	}

	provider := cloudprovider.New(e.cloud, cloudprovider.DefaultBatchOptions, nil)
	for id, want := range map[string]*cloudprovider.Error{untagged: cloudprovider.ErrNotOwned, renamed: cloudprovider.ErrNotOwned, neverExisted: cloudprovider.ErrNotFound} {
		if _, err := provider.Get(ctx, id); !errors.Is(err, want) {
			t.Errorf("Get(%s) = %v, want %s", id, err, want.Code)
		}
	}
	if instance, err := provider.Get(ctx, kept); err != nil || instance.ID != kept {
		t.Errorf("Get(%s) = %v, %v; want the instance", kept, instance, err)
	}

	before = awsCalls(t)
	results, err := e.cloud.TerminateInstances(ctx, []string{untagged, renamed})
	if err != nil {
		t.Fatal(err)
	}
	_, calls = callsSince(t, before)
	wantCodes(t, "terminate", results, map[string]cloudprovider.ErrorCode{untagged: cloudprovider.CodeNotOwned, renamed: cloudprovider.CodeNotOwned})
	wantCalls(t, "terminate", calls, map[string]int{"DescribeInstances": 1})
	wantStates(t, e, types.InstanceStateNameRunning, ids...)
}

package aws

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The leader deletes its cluster's templates that no launch used for the TTL, keeps
// those used lately and other clusters', and a later launch makes a deleted one again.
func TestUnusedLaunchTemplatesAreCollected(t *testing.T) {
	e := newEC2Env(t)
	ctx := context.Background()
	clock := clocktesting.NewFakeClock(time.Now())
	cloud := New(Options{ClusterName: testCluster, Clock: clock}, e.clients)
	launchFor := func(pool, claim string) string {
		t.Helper()
		req := launchRequest(e, claim)
		req.Labels[v1beta1.LabelNodePool] = pool
		mark := e.proxy.mark()
		if _, err := cloud.launch(ctx, req, testInstanceTypes()); err != nil {
			t.Fatal(err)
		}
		return createFleetForm(t, e.proxy.since(mark)).Get("LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName")
	}
	idle := launchFor("idle", "idle-1")
	busy := launchFor("busy", "busy-1")
	other := "stratos/other-cluster/0123456789abcdef0123"
	if _, err := e.clients.EC2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(other),
		LaunchTemplateData: &types.RequestLaunchTemplateData{UserData: aws.String("")},
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeLaunchTemplate,
			Tags: ec2Tags(map[string]string{v1beta1.TagCluster: "other-cluster"})}},
	}); err != nil {
		t.Fatal(err)
	}

	// Within the TTL nothing goes, however unused.
	if deleted, err := cloud.templates.collect(ctx, clock.Now(), time.Hour); err != nil || len(deleted) != 0 {
		t.Fatalf("collect within the TTL deleted %v, %v", deleted, err)
	}
	clock.Step(2 * time.Hour)
	launchFor("busy", "busy-2")
	deleted, err := cloud.templates.collect(ctx, clock.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(deleted, []string{idle}) {
		t.Fatalf("deleted %v, want only the template unused for two hours, %s", deleted, idle)
	}
	left := map[string]bool{}
	out, err := e.clients.EC2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lt := range out.LaunchTemplates {
		left[aws.ToString(lt.LaunchTemplateName)] = true
	}
	if left[idle] || !left[busy] || !left[other] {
		t.Fatalf("templates left %v: want %s gone, %s (used) and %s (another cluster's) kept", left, idle, busy, other)
	}

	// The idle pool's next launch makes its template again.
	before := awsCalls(t)
	if again := launchFor("idle", "idle-2"); again != idle {
		t.Fatalf("the idle pool launched from %s, want its template %s again", again, idle)
	}
	_, calls := callsSince(t, before)
	wantCalls(t, "the launch after the collection", calls, map[string]int{"DescribeInstances": 1, "CreateLaunchTemplate": 1, "CreateFleet": 1})
}

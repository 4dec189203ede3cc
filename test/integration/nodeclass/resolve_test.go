package nodeclass_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider/aws"
	"github.com/stratos-sh/stratos/internal/controllers/ec2nodeclass"
)

// A class resolves to the images behind its alias, its subnets with their zones, its
// security group and the instance profile Stratos makes for its role, and says so; a
// class whose subnets match nothing says that, once, without disturbing the first, and
// resolves once a subnet is tagged for it; a new image published behind the alias is
// picked up by the periodic refresh.
func TestClassesResolveSayWhatDoesNotAndFollowNewImages(t *testing.T) {
	f := newFixture(t, ec2nodeclass.Options{Refresh: time.Second, RetryFailed: 500 * time.Millisecond}, nil)
	f.create(class("default"))
	f.eventually("default is Ready", func() bool {
		c := f.ready("default")
		return c != nil && c.Status == metav1.ConditionTrue
	})
	got := f.get("default")
	profile := aws.InstanceProfileName(clusterName, f.clients.Region, "default", "nodes")
	want := v1beta1.EC2NodeClassStatus{
		ObservedGeneration: got.Generation,
		Conditions:         got.Status.Conditions,
		AMIs: []v1beta1.ResolvedAMI{
			{ID: imageV1AMD64.ID, Name: imageV1AMD64.Name, Architecture: "amd64", Family: "al2023"},
			{ID: imageV1ARM64.ID, Name: imageV1ARM64.Name, Architecture: "arm64", Family: "al2023"},
		},
		Subnets:         f.subnets,
		SecurityGroups:  []v1beta1.ResolvedSecurityGroup{{ID: f.group, Name: "nodes"}},
		InstanceProfile: profile,
	}
	if !reflect.DeepEqual(got.Status, want) {
		t.Errorf("status:\n%+v\nwant\n%+v", got.Status, want)
	}
	if f.subnets[0].ZoneID == "" {
		t.Errorf("moto gave no zone IDs: they were not checked")
	}
	if c := f.ready("default"); c.Reason != ec2nodeclass.ReasonResolved || c.ObservedGeneration != got.Generation {
		t.Errorf("Ready %+v", c)
	}
	if !controllerutil.ContainsFinalizer(got, ec2nodeclass.Finalizer) || !f.profileExists(profile) {
		t.Errorf("finalizers %v, profile %s exists: %v; a class with a role gets both", got.Finalizers, profile, f.profileExists(profile))
	}
	f.eventually("a Resolved event for default", func() bool { return len(f.events("default", ec2nodeclass.ReasonResolved)) == 1 })

	broken := class("broken")
	broken.Spec.SubnetSelectorTerms = []v1beta1.SubnetSelectorTerm{{Tags: map[string]string{"stratos.sh/discovery": "broken"}}}
	f.create(broken)
	f.eventually("broken is not Ready for its subnets", func() bool {
		c := f.ready("broken")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == aws.ReasonSubnetsNotFound
	})
	if c := f.ready("broken"); !strings.Contains(c.Message, "spec.subnetSelectorTerms") {
		t.Errorf("message %q does not say which selector", c.Message)
	}
	if got := f.get("broken").Status; len(got.AMIs) != 2 || len(got.SecurityGroups) != 1 || got.Subnets != nil {
		t.Errorf("broken's status %+v; the parts that resolve are there, the subnets are not", got)
	}
	// It is tried again and again; the Warning is told once.
	start := f.resolver.count("broken")
	f.eventually("broken is resolved three more times", func() bool { return f.resolver.count("broken") >= start+3 })
	if warnings := f.events("broken", aws.ReasonSubnetsNotFound); len(warnings) != 1 || warnings[0].Series != nil || warnings[0].Type != "Warning" {
		t.Errorf("Warning events %+v; want one, not repeated", warnings)
	}
	if c := f.ready("default"); c.Status != metav1.ConditionTrue {
		t.Errorf("default's Ready %+v; a broken class disturbed it", c)
	}

	// Tagging a subnet for it fixes it on AWS's side; the retry sees it.
	if _, err := f.clients.EC2.CreateTags(f.ctx, &ec2.CreateTagsInput{Resources: []string{f.subnets[0].ID},
		Tags: []ec2types.Tag{{Key: awssdk.String("stratos.sh/discovery"), Value: awssdk.String("broken")}}}); err != nil {
		t.Fatal(err)
	}
	f.eventually("broken recovers", func() bool {
		c := f.ready("broken")
		return c.Status == metav1.ConditionTrue && len(f.get("broken").Status.Subnets) == 1
	})
	f.eventually("a Resolved event for broken", func() bool { return len(f.events("broken", ec2nodeclass.ReasonResolved)) == 1 })

	// A new image behind al2023@latest: the refresh picks it up, arm64 stays.
	f.putParameter(alAMD64, imageV2AMD64.ID)
	f.eventually("default resolves to the new image", func() bool {
		amis := f.get("default").Status.AMIs
		return len(amis) == 2 && amis[0].ID == imageV2AMD64.ID && amis[1].ID == imageV1ARM64.ID
	})
	f.eventually("an ImagesChanged event for default", func() bool { return len(f.events("default", ec2nodeclass.ReasonImagesChanged)) == 1 })
}

// A deleted class keeps its instance profile until no claim uses it, then removes it
// and goes; a class that names its own profile has no finalizer and goes at once; and
// the sweep removes a profile Stratos made for a class that no longer exists.
func TestDeletingAClassRemovesItsInstanceProfileOnceNoClaimUsesIt(t *testing.T) {
	f := newFixture(t, ec2nodeclass.Options{SweepInterval: 500 * time.Millisecond}, nil)
	// A profile left by a class deleted while its finalizer was taken off by hand.
	if res := f.resolver.Resolver.Resolve(f.ctx, class("ghost")); res.Failure(aws.PartInstanceProfile) != nil {
		t.Fatal(res.Failure(aws.PartInstanceProfile))
	}
	ghost := aws.InstanceProfileName(clusterName, f.clients.Region, "ghost", "nodes")
	f.eventually("the sweep removes the ghost's profile", func() bool { return !f.profileExists(ghost) })

	f.create(class("default"))
	profile := aws.InstanceProfileName(clusterName, f.clients.Region, "default", "nodes")
	f.eventually("default is Ready", func() bool {
		c := f.ready("default")
		return c != nil && c.Status == metav1.ConditionTrue
	})
	claim := &v1beta1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1"},
		Spec: v1beta1.NodeClaimSpec{NodePool: "web", NodeClassRef: v1beta1.NodeClassReference{Kind: "EC2NodeClass", Name: "default"},
			DesiredState: v1beta1.DesiredRunning},
	}
	f.create(claim)
	if err := f.env.Client.Delete(f.ctx, f.get("default")); err != nil {
		t.Fatal(err)
	}
	f.eventually("default says it waits for its claims", func() bool {
		c := f.ready("default")
		return c.Status == metav1.ConditionFalse && c.Reason == ec2nodeclass.ReasonDeleting && strings.Contains(c.Message, "1 NodeClaims")
	})
	// The sweep runs meanwhile: a class being deleted still exists, and keeps its profile.
	sweeps := f.resolver.sweepCount()
	f.eventually("two more sweeps", func() bool { return f.resolver.sweepCount() >= sweeps+2 })
	if !f.profileExists(profile) {
		t.Fatal("the profile went while a claim still uses the class")
	}
	if err := f.env.Client.Delete(f.ctx, claim); err != nil {
		t.Fatal(err)
	}
	f.eventually("default and its profile are gone", func() bool { return f.gone("default") && !f.profileExists(profile) })

	own := class("own")
	own.Spec.Role, own.Spec.InstanceProfile = "", "own-profile"
	f.createProfile("own-profile")
	f.create(own)
	f.eventually("own is Ready with its own profile", func() bool {
		c := f.ready("own")
		return c != nil && c.Status == metav1.ConditionTrue && f.get("own").Status.InstanceProfile == "own-profile"
	})
	if got := f.get("own"); controllerutil.ContainsFinalizer(got, ec2nodeclass.Finalizer) {
		t.Errorf("finalizers %v; a class with its own profile needs none", got.Finalizers)
	}
	if err := f.env.Client.Delete(f.ctx, f.get("own")); err != nil {
		t.Fatal(err)
	}
	f.eventually("own is gone", func() bool { return f.gone("own") })
	if !f.profileExists("own-profile") {
		t.Error("deleting a class removed the profile it only named")
	}
}

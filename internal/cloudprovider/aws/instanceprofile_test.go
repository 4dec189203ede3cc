package aws

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestInstanceProfileNamesAreValidAndDistinct(t *testing.T) {
	valid := regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)
	long := strings.Repeat("c", 200)
	names := map[string]bool{}
	for _, in := range [][4]string{
		{"prod", "us-east-1", "default", "nodes"},
		{"prod", "us-west-2", "default", "nodes"},
		{"prod", "us-east-1", "gpu", "nodes"},
		{"prod", "us-east-1", "default", "nodes-v2"},
		{"staging", "us-east-1", "default", "nodes"},
		{long, "us-east-1", "default", "nodes"},
		{long + "x", "us-east-1", "default", "nodes"},
		{"we/ird name", "us-east-1", "default", "nodes"},
	} {
		name := InstanceProfileName(in[0], in[1], in[2], in[3])
		if !valid.MatchString(name) {
			t.Errorf("InstanceProfileName%v = %q; IAM refuses it", in, name)
		}
		if names[name] {
			t.Errorf("InstanceProfileName%v = %q, the name of another cluster, region, class or role", in, name)
		}
		names[name] = true
		if again := InstanceProfileName(in[0], in[1], in[2], in[3]); again != name {
			t.Errorf("InstanceProfileName%v changed from %q to %q", in, name, again)
		}
	}
	if path := InstanceProfilePath("we/ird name"); path != "/stratos/we-ird-name/" {
		t.Errorf("InstanceProfilePath = %q", path)
	}
	if path := InstanceProfileClassPath("we/ird name", "gpu.a"); path != "/stratos/we-ird-name/gpu.a/" {
		t.Errorf("InstanceProfileClassPath = %q", path)
	}
}

func createRole(t *testing.T, clients *Clients, name string) {
	t.Helper()
	_, err := clients.IAM.CreateRole(context.Background(), &iam.CreateRoleInput{
		RoleName:                 aws.String(name),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
}

// profileOf reads an instance profile: its path, roles and tags; nil when it is gone.
func profileOf(t *testing.T, clients *Clients, name string) *iam.GetInstanceProfileOutput {
	t.Helper()
	out, err := clients.IAM.GetInstanceProfile(context.Background(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if isNoSuchEntity(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func roleNames(out *iam.GetInstanceProfileOutput) []string {
	var names []string
	for _, r := range out.InstanceProfile.Roles {
		names = append(names, aws.ToString(r.RoleName))
	}
	return names
}

func roleClass(name, role string) *v1beta1.EC2NodeClass {
	class := awsClass(name, nil, nil, nil)
	class.Spec.Role = role
	return class
}

// A class with a role gets an instance profile Stratos makes, tagged and under the
// class's path, that holds the role; resolving again changes nothing; deleting the
// class's profiles removes it.
func TestManagedInstanceProfileHoldsTheRole(t *testing.T) {
	r, clients := newTestResolver(t)
	ctx := context.Background()
	createRole(t, clients, "nodes")

	name, failure := r.resolveInstanceProfile(ctx, roleClass("default", "nodes"))
	if failure != nil || name != InstanceProfileName(testCluster, clients.Region, "default", "nodes") {
		t.Fatalf("resolved to %q, %v; want the managed profile's name", name, failure)
	}
	profile := profileOf(t, clients, name)
	if profile == nil {
		t.Fatalf("instance profile %s was not made", name)
	}
	if got := aws.ToString(profile.InstanceProfile.Path); got != "/stratos/"+testCluster+"/default/" {
		t.Errorf("path = %q", got)
	}
	tags := profile.InstanceProfile.Tags
	if tagValue(tags, v1beta1.TagCluster) != testCluster || tagValue(tags, TagNodeClass) != "default" || tagValue(tags, "kubernetes.io/cluster/"+testCluster) != "owned" {
		t.Errorf("tags = %v; want the cluster, the class and kubernetes.io/cluster/%s", tags, testCluster)
	}
	if got := roleNames(profile); !slices.Equal(got, []string{"nodes"}) {
		t.Errorf("roles = %v; want [nodes]", got)
	}

	if again, failure := r.resolveInstanceProfile(ctx, roleClass("default", "nodes")); failure != nil || again != name {
		t.Fatalf("resolving again gave %q, %v", again, failure)
	}
	if got := roleNames(profileOf(t, clients, name)); !slices.Equal(got, []string{"nodes"}) {
		t.Errorf("after resolving again, roles = %v; want [nodes]", got)
	}

	if err := r.DeleteInstanceProfile(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	if profileOf(t, clients, name) != nil {
		t.Errorf("instance profile %s is still there after it was deleted", name)
	}
	if err := r.DeleteInstanceProfile(ctx, "default"); err != nil {
		t.Errorf("deleting a profile that is gone: %v", err)
	}
}

// A changed role gets a profile of its own and the old profile keeps the old role, so
// that running and standby nodes keep their credentials; a role that does not exist
// fails with RoleNotFound and touches neither. The old profile goes when retired, the
// current one and any profile kept are left.
//
// On main before the change, the role was swapped inside the one profile of the class:
// this test (its calls adapted to the old names) failed at "after a missing role, the
// old profile holds []; want [nodes]", then "the new role resolved to the old profile"
// and "the old profile holds [nodes-v2]; want [nodes]".
func TestAChangedRoleGetsItsOwnProfileAndLeavesTheOldOneAlone(t *testing.T) {
	r, clients := newTestResolver(t)
	ctx := context.Background()
	createRole(t, clients, "nodes")
	createRole(t, clients, "nodes-v2")

	old, failure := r.resolveInstanceProfile(ctx, roleClass("default", "nodes"))
	if failure != nil {
		t.Fatal(failure)
	}
	_, failure = r.resolveInstanceProfile(ctx, roleClass("default", "no-such-role"))
	if failure == nil || failure.Reason != ReasonRoleNotFound || !strings.Contains(failure.Message, "no-such-role") {
		t.Errorf("a missing role failed with %+v; want RoleNotFound naming it", failure)
	}
	if got := roleNames(profileOf(t, clients, old)); !slices.Equal(got, []string{"nodes"}) {
		t.Errorf("after a missing role, the old profile holds %v; want [nodes]", got)
	}

	current, failure := r.resolveInstanceProfile(ctx, roleClass("default", "nodes-v2"))
	if failure != nil {
		t.Fatalf("changing the role: %v", failure)
	}
	if current == old {
		t.Fatalf("the new role resolved to the old profile %s", old)
	}
	if got := roleNames(profileOf(t, clients, old)); !slices.Equal(got, []string{"nodes"}) {
		t.Errorf("the old profile holds %v; want [nodes]", got)
	}
	if got := roleNames(profileOf(t, clients, current)); !slices.Equal(got, []string{"nodes-v2"}) {
		t.Errorf("the new profile holds %v; want [nodes-v2]", got)
	}

	// A claim still holds the old profile: it stays. The missing role's profile, made
	// before its add failed, holds nothing and goes.
	failed := InstanceProfileName(testCluster, clients.Region, "default", "no-such-role")
	removed, err := r.RetireInstanceProfiles(ctx, "default", func(name string) bool { return name == current || name == old })
	if err != nil || !slices.Equal(removed, []string{failed}) {
		t.Fatalf("retiring while the old profile is held removed %v, %v; want [%s]", removed, err, failed)
	}
	if profileOf(t, clients, old) == nil {
		t.Fatalf("the old profile went while a claim held it")
	}
	removed, err = r.RetireInstanceProfiles(ctx, "default", func(name string) bool { return name == current })
	if err != nil || !slices.Equal(removed, []string{old}) {
		t.Errorf("retired %v, %v; want [%s]", removed, err, old)
	}
	if profileOf(t, clients, old) != nil || profileOf(t, clients, current) == nil {
		t.Errorf("after retiring, the old profile exists: %v, the current one: %v; want false, true",
			profileOf(t, clients, old) != nil, profileOf(t, clients, current) != nil)
	}
}

// A profile made before each role had its own (one per class, under the cluster's
// path) is retired with the class's other old profiles, and deleted with the class.
func TestTheProfileOfAnEarlierVersionIsRetired(t *testing.T) {
	r, clients := newTestResolver(t)
	ctx := context.Background()
	createRole(t, clients, "nodes")
	legacy := legacyInstanceProfileName(testCluster, clients.Region, "default")
	if _, err := clients.IAM.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
		InstanceProfileName: aws.String(legacy), Path: aws.String(InstanceProfilePath(testCluster)), Tags: r.instanceProfileTags("default"),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := clients.IAM.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String(legacy), RoleName: aws.String("nodes")}); err != nil {
		t.Fatal(err)
	}
	current, failure := r.resolveInstanceProfile(ctx, roleClass("default", "nodes"))
	if failure != nil {
		t.Fatal(failure)
	}
	removed, err := r.RetireInstanceProfiles(ctx, "default", func(name string) bool { return name == current })
	if err != nil || !slices.Equal(removed, []string{legacy}) {
		t.Errorf("retired %v, %v; want [%s]", removed, err, legacy)
	}
}

// A profile that has the managed name but not Stratos's tags for the class is neither
// used nor deleted.
func TestAProfileStratosDidNotMakeIsLeftAlone(t *testing.T) {
	r, clients := newTestResolver(t)
	ctx := context.Background()
	createRole(t, clients, "nodes")
	name := InstanceProfileName(testCluster, clients.Region, "default", "nodes")
	if _, err := clients.IAM.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
	if _, failure := r.resolveInstanceProfile(ctx, roleClass("default", "nodes")); failure == nil || failure.Reason != ReasonInstanceProfileError {
		t.Errorf("resolving over a foreign profile failed with %+v; want InstanceProfileError", failure)
	}
	if err := r.DeleteInstanceProfile(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	if profileOf(t, clients, name) == nil {
		t.Errorf("the foreign profile %s was deleted", name)
	}
}

// A profile named in spec.instanceProfile is used as it is when it exists.
func TestAnExistingInstanceProfileIsUsed(t *testing.T) {
	r, clients := newTestResolver(t)
	ctx := context.Background()
	if _, err := clients.IAM.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("mine")}); err != nil {
		t.Fatal(err)
	}
	class := awsClass("default", nil, nil, nil)
	class.Spec.InstanceProfile = "mine"
	if name, failure := r.resolveInstanceProfile(ctx, class); failure != nil || name != "mine" {
		t.Errorf("resolved to %q, %v; want mine", name, failure)
	}
	class.Spec.InstanceProfile = "theirs"
	if _, failure := r.resolveInstanceProfile(ctx, class); failure == nil || failure.Reason != ReasonInstanceProfileNotFound {
		t.Errorf("a missing profile failed with %+v; want InstanceProfileNotFound", failure)
	}
}

// The sweep removes the cluster's profiles whose class is gone, and only those.
func TestSweepRemovesTheProfilesOfGoneClasses(t *testing.T) {
	r, clients := newTestResolver(t)
	ctx := context.Background()
	createRole(t, clients, "nodes")
	for _, class := range []string{"kept", "gone"} {
		if _, failure := r.resolveInstanceProfile(ctx, roleClass(class, "nodes")); failure != nil {
			t.Fatal(failure)
		}
	}
	other := NewResolver(Options{ClusterName: "other-cluster"}, clients)
	if _, failure := other.resolveInstanceProfile(ctx, roleClass("gone", "nodes")); failure != nil {
		t.Fatal(failure)
	}
	if _, err := clients.IAM.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("someone-elses")}); err != nil {
		t.Fatal(err)
	}

	removed, err := r.SweepInstanceProfiles(ctx, func(class string) bool { return class == "kept" })
	if err != nil {
		t.Fatal(err)
	}
	gone := InstanceProfileName(testCluster, clients.Region, "gone", "nodes")
	if !slices.Equal(removed, []string{gone}) {
		t.Errorf("removed %v; want [%s]", removed, gone)
	}
	for name, want := range map[string]bool{
		InstanceProfileName(testCluster, clients.Region, "kept", "nodes"): true,
		gone: false,
		InstanceProfileName("other-cluster", clients.Region, "gone", "nodes"): true,
		"someone-elses": true,
	} {
		if exists := profileOf(t, clients, name) != nil; exists != want {
			t.Errorf("after the sweep, profile %s exists: %v; want %v", name, exists, want)
		}
	}
}

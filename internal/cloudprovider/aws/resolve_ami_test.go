package aws

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestAliasParametersFollowTheEKSPublishedPaths(t *testing.T) {
	cases := []struct {
		alias, family string
		want          map[string]string
	}{
		{"al2023@latest", FamilyAL2023, map[string]string{
			"x86_64": "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id",
			"arm64":  "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/standard/recommended/image_id",
		}},
		{"al2023@v20250601", FamilyAL2023, map[string]string{
			"x86_64": "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.37-v20250601/image_id",
			"arm64":  "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.37-v20250601/image_id",
		}},
		{"bottlerocket@latest", FamilyBottlerocket, map[string]string{
			"x86_64": "/aws/service/bottlerocket/aws-k8s-1.37/x86_64/latest/image_id",
			"arm64":  "/aws/service/bottlerocket/aws-k8s-1.37/arm64/latest/image_id",
		}},
		{"bottlerocket@v1.40.0", FamilyBottlerocket, map[string]string{
			"x86_64": "/aws/service/bottlerocket/aws-k8s-1.37/x86_64/1.40.0/image_id",
			"arm64":  "/aws/service/bottlerocket/aws-k8s-1.37/arm64/1.40.0/image_id",
		}},
	}
	for _, c := range cases {
		family, params, err := aliasParameters(DefaultSSMParameterRoot, "1.37", c.alias)
		if err != nil || family != c.family || !reflect.DeepEqual(params, c.want) {
			t.Errorf("aliasParameters(%s) = %s, %v, %v; want %s, %v", c.alias, family, params, err, c.family, c.want)
		}
	}
	for _, bad := range []string{"ubuntu@latest", "al2023", "al2023@"} {
		if _, _, err := aliasParameters(DefaultSSMParameterRoot, "1.37", bad); err == nil {
			t.Errorf("aliasParameters(%s) accepted it", bad)
		}
	}
}

// The images behind al2023 and bottlerocket aliases, latest and by version, resolve
// through the SSM parameters the test publishes for the cluster's Kubernetes version.
func TestAliasesResolveThroughSSMParameters(t *testing.T) {
	images := []motoImage{
		{ID: "ami-0a1a0000000000001", Name: "amazon-eks-node-al2023-x86_64-standard-1.37-v20250601", Architecture: "x86_64", CreationDate: "2025-06-01T00:00:00.000Z"},
		{ID: "ami-0a1a0000000000002", Name: "amazon-eks-node-al2023-arm64-standard-1.37-v20250601", Architecture: "arm64", CreationDate: "2025-06-01T00:00:00.000Z"},
		{ID: "ami-0a1a0000000000003", Name: "amazon-eks-node-al2023-x86_64-standard-1.37-v20250501", Architecture: "x86_64", CreationDate: "2025-05-01T00:00:00.000Z"},
		{ID: "ami-0b0b0000000000001", Name: "bottlerocket-aws-k8s-1.37-x86_64-v1.40.0", Architecture: "x86_64", CreationDate: "2025-06-02T00:00:00.000Z"},
		{ID: "ami-0b0b0000000000002", Name: "bottlerocket-aws-k8s-1.37-aarch64-v1.40.0", Architecture: "arm64", CreationDate: "2025-06-02T00:00:00.000Z"},
	}
	r, clients := newTestResolver(t, images...)
	al := testSSMRoot + "/eks/optimized-ami/1.37/amazon-linux-2023/"
	putParameter(t, clients, al+"x86_64/standard/recommended/image_id", "ami-0a1a0000000000001")
	putParameter(t, clients, al+"arm64/standard/recommended/image_id", "ami-0a1a0000000000002")
	putParameter(t, clients, al+"x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.37-v20250501/image_id", "ami-0a1a0000000000003")
	br := testSSMRoot + "/bottlerocket/aws-k8s-1.37/"
	putParameter(t, clients, br+"x86_64/latest/image_id", "ami-0b0b0000000000001")
	putParameter(t, clients, br+"arm64/latest/image_id", "ami-0b0b0000000000002")
	putParameter(t, clients, br+"arm64/1.40.0/image_id", "ami-0b0b0000000000002")

	cases := []struct {
		alias string
		want  []v1beta1.ResolvedAMI
	}{
		{"al2023@latest", []v1beta1.ResolvedAMI{
			{ID: "ami-0a1a0000000000001", Name: images[0].Name, Architecture: "amd64", Family: FamilyAL2023},
			{ID: "ami-0a1a0000000000002", Name: images[1].Name, Architecture: "arm64", Family: FamilyAL2023},
		}},
		// Only the amd64 image of this version is published: arm64 is left out.
		{"al2023@v20250501", []v1beta1.ResolvedAMI{
			{ID: "ami-0a1a0000000000003", Name: images[2].Name, Architecture: "amd64", Family: FamilyAL2023},
		}},
		{"bottlerocket@latest", []v1beta1.ResolvedAMI{
			{ID: "ami-0b0b0000000000001", Name: images[3].Name, Architecture: "amd64", Family: FamilyBottlerocket},
			{ID: "ami-0b0b0000000000002", Name: images[4].Name, Architecture: "arm64", Family: FamilyBottlerocket},
		}},
		{"bottlerocket@v1.40.0", []v1beta1.ResolvedAMI{
			{ID: "ami-0b0b0000000000002", Name: images[4].Name, Architecture: "arm64", Family: FamilyBottlerocket},
		}},
	}
	for _, c := range cases {
		amis, failure := r.resolveAMIs(context.Background(), []v1beta1.AMISelectorTerm{{Alias: c.alias}}, "")
		if failure != nil || !reflect.DeepEqual(amis, c.want) {
			t.Errorf("%s resolved to %+v, %v; want %+v", c.alias, amis, failure, c.want)
		}
	}

	// A version nobody published does not resolve, and the message says where it looked.
	_, failure := r.resolveAMIs(context.Background(), []v1beta1.AMISelectorTerm{{Alias: "bottlerocket@v9.9.9"}}, "")
	if failure == nil || failure.Reason != ReasonAMINotFound || !strings.Contains(failure.Message, br+"x86_64/9.9.9/image_id") {
		t.Errorf("bottlerocket@v9.9.9 failed with %+v; want AMINotFound naming the parameters read", failure)
	}

	// A new image behind latest is what the next resolution gives.
	putParameter(t, clients, al+"x86_64/standard/recommended/image_id", "ami-0a1a0000000000003")
	amis, failure := r.resolveAMIs(context.Background(), []v1beta1.AMISelectorTerm{{Alias: "al2023@latest"}}, "")
	if failure != nil || len(amis) != 2 || amis[0].ID != "ami-0a1a0000000000003" {
		t.Errorf("after the parameter moved, al2023@latest resolved to %+v, %v; want ami-0a1a0000000000003 for amd64", amis, failure)
	}

	// Without the cluster's version an alias cannot be read.
	r.opts.KubernetesVersion = ""
	if _, failure := r.resolveAMIs(context.Background(), []v1beta1.AMISelectorTerm{{Alias: "al2023@latest"}}, ""); failure == nil || failure.Reason != ReasonAMINotFound {
		t.Errorf("an alias without a Kubernetes version failed with %+v; want AMINotFound", failure)
	}
}

// Terms by ID, name and tags add up, and the newest available image of each
// architecture among what they match wins.
func TestAMISelectorsPickTheNewestImagePerArchitecture(t *testing.T) {
	r, _ := newTestResolver(t,
		motoImage{ID: "ami-0c0c0000000000001", Name: "team-node-1", Architecture: "x86_64", CreationDate: "2025-01-01T00:00:00.000Z", Tags: map[string]string{"team": "a"}},
		motoImage{ID: "ami-0c0c0000000000002", Name: "team-node-2", Architecture: "x86_64", CreationDate: "2025-03-01T00:00:00.000Z", Tags: map[string]string{"team": "a", "release": "stable"}},
		motoImage{ID: "ami-0c0c0000000000003", Name: "team-node-arm-1", Architecture: "arm64", CreationDate: "2025-02-01T00:00:00.000Z", Tags: map[string]string{"team": "a"}},
		// Newer, but not available yet.
		motoImage{ID: "ami-0c0c0000000000004", Name: "team-node-3", Architecture: "x86_64", CreationDate: "2025-04-01T00:00:00.000Z", State: "pending", Tags: map[string]string{"team": "a"}},
		// Newer, but of an architecture Stratos does not launch.
		motoImage{ID: "ami-0c0c0000000000005", Name: "team-node-i386", Architecture: "i386", CreationDate: "2025-05-01T00:00:00.000Z", Tags: map[string]string{"team": "a"}},
		// Another account's image of the same name.
		motoImage{ID: "ami-0c0c0000000000006", Name: "team-node-9", Architecture: "x86_64", OwnerID: "111122223333", CreationDate: "2025-06-01T00:00:00.000Z"},
	)
	amd64 := func(id, name string) v1beta1.ResolvedAMI {
		return v1beta1.ResolvedAMI{ID: id, Name: name, Architecture: "amd64", Family: FamilyCustom}
	}
	arm := v1beta1.ResolvedAMI{ID: "ami-0c0c0000000000003", Name: "team-node-arm-1", Architecture: "arm64", Family: FamilyCustom}
	cases := []struct {
		name  string
		terms []v1beta1.AMISelectorTerm
		want  []v1beta1.ResolvedAMI
	}{
		{"by name with a wildcard", []v1beta1.AMISelectorTerm{{Name: "team-node-*", Owner: "self"}},
			[]v1beta1.ResolvedAMI{amd64("ami-0c0c0000000000002", "team-node-2"), arm}},
		{"by tag", []v1beta1.AMISelectorTerm{{Tags: map[string]string{"team": "a"}}},
			[]v1beta1.ResolvedAMI{amd64("ami-0c0c0000000000002", "team-node-2"), arm}},
		{"by tags that must all hold", []v1beta1.AMISelectorTerm{{Tags: map[string]string{"team": "a", "release": "*"}}},
			[]v1beta1.ResolvedAMI{amd64("ami-0c0c0000000000002", "team-node-2")}},
		{"by ID", []v1beta1.AMISelectorTerm{{ID: "ami-0c0c0000000000001"}},
			[]v1beta1.ResolvedAMI{amd64("ami-0c0c0000000000001", "team-node-1")}},
		{"terms add up", []v1beta1.AMISelectorTerm{{ID: "ami-0c0c0000000000001"}, {Name: "team-node-arm-*"}},
			[]v1beta1.ResolvedAMI{amd64("ami-0c0c0000000000001", "team-node-1"), arm}},
		{"by owner", []v1beta1.AMISelectorTerm{{Name: "team-node-*", Owner: "111122223333"}},
			[]v1beta1.ResolvedAMI{amd64("ami-0c0c0000000000006", "team-node-9")}},
	}
	for _, c := range cases {
		amis, failure := r.resolveAMIs(context.Background(), c.terms, "")
		if failure != nil || !reflect.DeepEqual(amis, c.want) {
			t.Errorf("%s: resolved to %+v, %v; want %+v", c.name, amis, failure, c.want)
		}
	}
	for _, terms := range [][]v1beta1.AMISelectorTerm{
		{{Name: "nothing-*"}},
		{{ID: "ami-0c0c0000000000004"}}, // pending
		{{ID: "ami-0c0c0000000000005"}}, // i386
		{{ID: "ami-0deadbeef0000000"}},
	} {
		if _, failure := r.resolveAMIs(context.Background(), terms, ""); failure == nil || failure.Reason != ReasonAMINotFound || failure.Transient {
			t.Errorf("%+v failed with %+v; want AMINotFound", terms, failure)
		}
	}
}

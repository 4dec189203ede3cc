package chart_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/stratos-sh/stratos/internal/operator"
)

// capiValues are values for the Cluster API provider, with the groups given when groups
// is not nil.
func capiValues(t *testing.T, groups map[string]any) string {
	values := map[string]any{"settings": map[string]any{"clusterName": "metal", "cloudProvider": "clusterapi"}}
	if groups != nil {
		values["clusterAPI"] = groups
	}
	return valuesFile(t, values)
}

// groupRules are the permissions the chart grants on every resource of each group.
func groupRules(groups []string, verbs ...string) sets.Set[rule] {
	out := sets.New[rule]()
	for _, g := range groups {
		for _, v := range verbs {
			out.Insert(rule{g, "*", "", v})
		}
	}
	return out
}

// With the Cluster API provider the chart binds the role generated from the provider's
// markers, plus get and create on the bootstrap groups and get, create and patch on the
// infrastructure groups the values list (CAPI's own groups by default), and nothing of
// EC2's or the fake cloud's; the operator parses the rendered arguments as a clusterapi
// operator.
func TestClusterAPIRoleFollowsTheGroups(t *testing.T) {
	generated := permissions(t, ofKind(readObjects(t, repoPath(t, "config", "rbac", "clusterapi", "role.yaml")), "ClusterRole"))
	if len(generated) == 0 {
		t.Fatal("config/rbac/clusterapi has no ClusterRole (run make generate)")
	}
	for _, tc := range []struct {
		name                      string
		groups                    map[string]any
		bootstrap, infrastructure []string
	}{
		{"default groups", nil, []string{"bootstrap.cluster.x-k8s.io"}, []string{"infrastructure.cluster.x-k8s.io"}},
		{"Metal3 with its hosts", map[string]any{"infrastructureGroups": []string{"infrastructure.cluster.x-k8s.io", "metal3.io"}},
			[]string{"bootstrap.cluster.x-k8s.io"}, []string{"infrastructure.cluster.x-k8s.io", "metal3.io"}},
		{"k0smotron's bootstrap", map[string]any{"bootstrapGroups": []string{"bootstrap.cluster.x-k8s.io", "bootstrap.k0smotron.io"}, "infrastructureGroups": []string{}},
			[]string{"bootstrap.cluster.x-k8s.io", "bootstrap.k0smotron.io"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := render(t, capiValues(t, tc.groups))
			roles := namedRoles(objects, "ClusterRole", "stratos-clusterapi")
			bindings := namedRoles(objects, "ClusterRoleBinding", "stratos-clusterapi")
			if len(roles) != 1 || len(bindings) != 1 {
				t.Fatalf("want the stratos-clusterapi ClusterRole and its binding, got %v and %v", kinds(roles), kinds(bindings))
			}
			want := generated.Union(groupRules(tc.bootstrap, "get", "create")).Union(groupRules(tc.infrastructure, "get", "create", "patch"))
			if got := permissions(t, roles); !got.Equal(want) {
				t.Errorf("the role grants %v more and %v less than the generated rules and the groups", sortedRules(got.Difference(want)), sortedRules(want.Difference(got)))
			}
			if len(namedRoles(objects, "ClusterRole", "stratos-fake-kubelets")) > 0 {
				t.Error("the fake kubelets' role is rendered for Cluster API")
			}
			opts := parseDeployment(t, objects)
			if opts.CloudProvider != operator.ProviderClusterAPI {
				t.Errorf("the operator runs with --cloud-provider=%s", opts.CloudProvider)
			}
			args := deployment(t, objects).Spec.Template.Spec.Containers[0].Args
			if i := slices.IndexFunc(args, func(a string) bool {
				return strings.HasPrefix(a, "--aws-") || strings.HasPrefix(a, "--cluster-") && !strings.HasPrefix(a, "--cluster-name") && !strings.HasPrefix(a, "--cluster-autoscaler") ||
					strings.HasPrefix(a, "--fake-") || strings.HasPrefix(a, "--interruption-queue")
			}); i >= 0 {
				t.Errorf("the operator gets %s, a flag of another cloud", args[i])
			}
		})
	}
	for _, cloud := range []string{"aws", "fake"} {
		objects := render(t, valuesFile(t, map[string]any{"settings": map[string]any{"clusterName": "test", "cloudProvider": cloud}}))
		if roles := namedRoles(objects, "ClusterRole", "stratos-clusterapi"); len(roles) > 0 {
			t.Errorf("cloudProvider %s renders the Cluster API role", cloud)
		}
	}
}

// Settings that only EC2 reads are refused with Cluster API, as the operator would
// refuse their flags; a group that is not an API group name is refused by the schema.
func TestClusterAPIRefusesOtherCloudsSettings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"an interruption queue", map[string]any{"settings": map[string]any{"clusterName": "metal", "cloudProvider": "clusterapi", "interruptionQueue": "stratos-metal"}},
			"settings.interruptionQueue needs settings.cloudProvider aws"},
		{"a Kubernetes version", map[string]any{"settings": map[string]any{"clusterName": "metal", "cloudProvider": "clusterapi", "kubernetesVersion": "1.33"}},
			"settings.kubernetesVersion does not apply to settings.cloudProvider clusterapi"},
		{"a group with a slash", map[string]any{"settings": map[string]any{"clusterName": "metal", "cloudProvider": "clusterapi"},
			"clusterAPI": map[string]any{"infrastructureGroups": []string{"infrastructure.cluster.x-k8s.io/v1beta1"}}}, "at '/clusterAPI/infrastructureGroups/0'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderErr(t, valuesFile(t, tc.values))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("helm said %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// The Cluster API values of the install guide render an operator for Cluster API with the
// groups the guide lists.
func TestTheInstallGuidesClusterAPIValuesRender(t *testing.T) {
	page, err := os.ReadFile(repoPath(t, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, found := strings.Cut(string(page), "```yaml\n# stratos-clusterapi-values.yaml\n")
	block, _, ended := strings.Cut(after, "```")
	if !found || !ended {
		t.Fatal("docs/install.md has no yaml block starting with # stratos-clusterapi-values.yaml")
	}
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	objects := render(t, path)
	if opts := parseDeployment(t, objects); opts.CloudProvider != operator.ProviderClusterAPI || opts.ClusterName != "metal-1" {
		t.Errorf("the operator runs for cluster %q on %q; want metal-1 on clusterapi", opts.ClusterName, opts.CloudProvider)
	}
	got := permissions(t, namedRoles(objects, "ClusterRole", "stratos-clusterapi"))
	for _, r := range []rule{{"bootstrap.cluster.x-k8s.io", "*", "", "create"}, {"infrastructure.cluster.x-k8s.io", "*", "", "patch"}} {
		if !got.Has(r) {
			t.Errorf("the guide's values do not grant %+v", r)
		}
	}
}

package chart_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The CRDs the chart installs are the generated ones in config/crd/bases, but for the
// chart's labels and its keep policy: a change of the API types without `make generate`
// fails here (and in hack/verify-generated.sh).
func TestChartCRDsAreTheGeneratedOnes(t *testing.T) {
	rendered := map[string]*unstructured.Unstructured{}
	for _, crd := range ofKind(render(t, minimal(t)), "CustomResourceDefinition") {
		rendered[crd.GetName()] = crd
	}
	files, err := filepath.Glob(repoPath(t, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated CRDs: %v", err)
	}
	for _, file := range files {
		for _, want := range readObjects(t, file) {
			got, ok := rendered[want.GetName()]
			if !ok {
				t.Errorf("the chart does not install %s", want.GetName())
				continue
			}
			delete(rendered, want.GetName())
			got = got.DeepCopy()
			annotations := got.GetAnnotations()
			delete(annotations, "helm.sh/resource-policy")
			got.SetAnnotations(annotations)
			got.SetLabels(nil)
			if !equality.Semantic.DeepEqual(got.Object, want.Object) {
				t.Errorf("the chart's %s differs from %s (run make generate)", want.GetName(), file)
			}
		}
	}
	for name := range rendered {
		t.Errorf("the chart installs %s, which config/crd/bases does not have", name)
	}
}

// inNamespace are the objects in namespace.
func inNamespace(objects []*unstructured.Unstructured, namespace string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objects {
		if o.GetNamespace() == namespace {
			out = append(out, o)
		}
	}
	return out
}

// The Role that lets pod scope auto look for Cluster Autoscaler follows the setting: it
// is granted in the ConfigMap's namespace for its name only, and not at all when the
// scope is not auto (the operator does not look then).
func TestAutoscalerStatusRoleFollowsTheSetting(t *testing.T) {
	objects := render(t, valuesFile(t, map[string]any{"settings": map[string]any{
		"clusterName": "test", "clusterAutoscalerStatusConfigMap": "autoscaling/ca-status",
	}}))
	roles := namedRoles(objects, "Role", "stratos-autoscaler-status")
	bindings := namedRoles(objects, "RoleBinding", "stratos-autoscaler-status")
	if len(roles) != 1 || roles[0].GetNamespace() != "autoscaling" || len(bindings) != 1 || bindings[0].GetNamespace() != "autoscaling" {
		t.Fatalf("want the Role and RoleBinding in autoscaling, got %v and %v", kinds(roles), kinds(bindings))
	}
	want := sets.New(rule{"", "configmaps", "ca-status", "get"})
	if got := permissions(t, roles); !got.Equal(want) {
		t.Errorf("the Role grants %v, want %v", sortedRules(got), sortedRules(want))
	}
	for _, scope := range []string{"all", "opted-in"} {
		objects := render(t, valuesFile(t, map[string]any{"settings": map[string]any{"clusterName": "test", "podScope": scope}}))
		if roles := namedRoles(objects, "Role", "stratos-autoscaler-status"); len(roles) > 0 {
			t.Errorf("podScope %s renders %v, which only auto uses", scope, kinds(roles))
		}
	}
}

// rule is one permission: a verb on a resource (of a name, if any) in an API group.
type rule struct{ group, resource, name, verb string }

// permissions flattens roles into their permissions.
func permissions(t testing.TB, roles []*unstructured.Unstructured) sets.Set[rule] {
	t.Helper()
	out := sets.New[rule]()
	for _, obj := range roles {
		role := convert[rbacv1.ClusterRole](t, obj) // a Role's fields are a ClusterRole's
		for _, r := range role.Rules {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, n := range names {
						for _, v := range r.Verbs {
							out.Insert(rule{g, res, n, v})
						}
					}
				}
			}
		}
	}
	return out
}

// namedRoles are the roles of a kind whose name (after the chart's prefix) is name.
func namedRoles(objects []*unstructured.Unstructured, kind, name string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range ofKind(objects, kind) {
		if o.GetName() == name {
			out = append(out, o)
		}
	}
	return out
}

// The chart grants exactly the permissions the code's RBAC markers generate
// (config/rbac): the operator's ClusterRole the generated ClusterRole's, its Role in each
// namespace the generated Role's; with the in-process fake cloud, the kubelets' roles
// theirs. Nothing is granted by hand.
func TestChartRBACIsTheGeneratedRBAC(t *testing.T) {
	generated := readObjects(t, repoPath(t, "config", "rbac", "role.yaml"))
	generatedKubelets := readObjects(t, repoPath(t, "config", "rbac", "fake-kubelets", "role.yaml"))
	for _, tc := range []struct {
		name, values string
		// roleNamespaces are the namespaces the operator's Role must be granted in.
		roleNamespaces []string
		kubelets       bool
	}{
		{"defaults", minimal(t), []string{releaseNamespace}, false},
		{"non-default", nonDefaultValues, []string{releaseNamespace, "stratos-leases", "stratos-prepull"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := render(t, tc.values)
			compare := func(what string, got, want []*unstructured.Unstructured) {
				t.Helper()
				if len(want) == 0 {
					t.Fatalf("config/rbac has no %s", what)
				}
				g, w := permissions(t, got), permissions(t, want)
				if !g.Equal(w) {
					t.Errorf("%s: the chart grants %v more and %v less than the markers generate", what, sortedRules(g.Difference(w)), sortedRules(w.Difference(g)))
				}
			}
			compare("operator ClusterRole", namedRoles(objects, "ClusterRole", "stratos"), ofKind(generated, "ClusterRole"))
			roles := namedRoles(objects, "Role", "stratos")
			var namespaces []string
			for _, role := range roles {
				namespaces = append(namespaces, role.GetNamespace())
				compare("operator Role in "+role.GetNamespace(), []*unstructured.Unstructured{role}, inNamespace(ofKind(generated, "Role"), "stratos"))
			}
			statusRole := namedRoles(objects, "Role", "stratos-autoscaler-status")
			compare("Cluster Autoscaler status Role", statusRole, inNamespace(ofKind(generated, "Role"), "kube-system"))
			if len(statusRole) != 1 || statusRole[0].GetNamespace() != "kube-system" {
				t.Errorf("the Role to look for Cluster Autoscaler is not in kube-system: %v", kinds(statusRole))
			}
			if !slices.Equal(slices.Sorted(slices.Values(namespaces)), tc.roleNamespaces) {
				t.Errorf("the operator's Role is granted in %v, want %v", namespaces, tc.roleNamespaces)
			}
			kubeletRoles := namedRoles(objects, "ClusterRole", "stratos-fake-kubelets")
			if !tc.kubelets {
				if len(kubeletRoles) > 0 {
					t.Errorf("the fake kubelets' ClusterRole is rendered without the in-process fake cloud")
				}
				return
			}
			compare("fake kubelets ClusterRole", kubeletRoles, ofKind(generatedKubelets, "ClusterRole"))
			kubeletRole := namedRoles(objects, "Role", "stratos-fake-kubelets")
			compare("fake kubelets Role", kubeletRole, ofKind(generatedKubelets, "Role"))
			if len(kubeletRole) != 1 || kubeletRole[0].GetNamespace() != "kube-node-lease" {
				t.Errorf("the fake kubelets' Role is not in kube-node-lease: %v", kinds(kubeletRole))
			}
		})
	}
}

// The operator's ClusterRole holds to least privilege: no Node creation (kubelets make
// Nodes), no Node status, no secrets, no wildcards, no namespaced-only permissions.
func TestOperatorClusterRoleIsLeastPrivilege(t *testing.T) {
	objects := render(t, minimal(t))
	for r := range permissions(t, namedRoles(objects, "ClusterRole", "stratos")) {
		switch {
		case r.group == "*" || r.resource == "*" || r.verb == "*":
			t.Errorf("wildcard in %+v", r)
		case r.resource == "nodes" && r.verb == "create":
			t.Errorf("the operator may create Nodes: %+v", r)
		case r.resource == "nodes/status":
			t.Errorf("the operator may write Node status: %+v", r)
		case r.resource == "secrets" || r.resource == "configmaps":
			t.Errorf("the operator may touch %s: %+v", r.resource, r)
		case r.resource == "leases" || (r.group == "" && r.resource == "events") || (r.resource == "pods" && r.verb == "create"):
			t.Errorf("%+v belongs in the namespaced Role", r)
		}
	}
}

func sortedRules(s sets.Set[rule]) []string {
	var out []string
	for r := range s {
		out = append(out, strings.Join([]string{r.group, r.resource, r.name, r.verb}, "/"))
	}
	slices.Sort(out)
	return out
}

package chart_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// installValues returns the values file docs/install.md has the reader write: the
// fenced block that starts with "# stratos-values.yaml".
func installValues(t *testing.T) string {
	t.Helper()
	page, err := os.ReadFile(repoPath(t, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, found := strings.Cut(string(page), "```yaml\n# stratos-values.yaml\n")
	if !found {
		t.Fatal("docs/install.md has no yaml block starting with # stratos-values.yaml")
	}
	block, _, found := strings.Cut(after, "```")
	if !found {
		t.Fatal("docs/install.md: the values block does not end")
	}
	return block
}

// The values file of the install guide installs what the guide says: the reader's own
// image, the controller's IAM role on the ServiceAccount, and the cluster and region
// reaching the operator's own flag parser.
func TestTheInstallGuidesValuesRender(t *testing.T) {
	block := installValues(t)
	var values struct {
		Settings       struct{ ClusterName string }
		Image          struct{ Repository, Tag string }
		AWS            struct{ Region string }
		ServiceAccount struct{ Annotations map[string]string } `json:"serviceAccount"`
	}
	if err := yaml.Unmarshal([]byte(block), &values); err != nil {
		t.Fatalf("docs/install.md's values do not parse: %v", err)
	}
	path := filepath.Join(t.TempDir(), "stratos-values.yaml")
	if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	objects := render(t, path)

	if want, got := values.Image.Repository+":"+values.Image.Tag, deployment(t, objects).Spec.Template.Spec.Containers[0].Image; want == ":" || got != want {
		t.Errorf("the operator runs image %q, want the guide's %q", got, want)
	}
	opts := parseDeployment(t, objects)
	if opts.ClusterName != values.Settings.ClusterName || opts.AWSRegion != values.AWS.Region {
		t.Errorf("the operator runs for cluster %q in %q, want the guide's %q in %q", opts.ClusterName, opts.AWSRegion, values.Settings.ClusterName, values.AWS.Region)
	}
	role := values.ServiceAccount.Annotations["eks.amazonaws.com/role-arn"]
	accounts := ofKind(objects, "ServiceAccount")
	if role == "" || len(accounts) != 1 || convert[corev1.ServiceAccount](t, accounts[0]).Annotations["eks.amazonaws.com/role-arn"] != role {
		t.Errorf("the ServiceAccount does not carry the guide's IAM role %q", role)
	}
}

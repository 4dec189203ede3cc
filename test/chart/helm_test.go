// Package chart_test checks the Helm chart in charts/stratos with the real helm binary
// (built by hack/tools.sh at a pinned version), against the real kube-apiserver of the test
// harness and with the operator's own flag parser: it lints, renders with default and
// non-default values, refuses bad values with the schema's message, applies every object
// with a server-side dry run, and holds the chart's CRDs and roles to the generated ones.
package chart_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/manifest"
)

// releaseNamespace is the namespace the tests install the chart in, the one the docs use.
const releaseNamespace = "stratos"

// repoPath is a path in the repository.
func repoPath(t testing.TB, elem ...string) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// helm runs the helm binary with args and returns its standard output, or its error
// with standard error.
func helm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	bin, err := harness.EnsureTools("helm")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "helm"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A HOME of its own keeps helm from reading or writing the user's configuration.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.New(strings.TrimSpace(stderr.String()) + ": " + err.Error())
	}
	return stdout.String(), nil
}

// valuesFile writes values as a YAML file for helm's -f.
func valuesFile(t testing.TB, values map[string]any) string {
	t.Helper()
	data, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// minimal are the only values an installation must give.
func minimal(t testing.TB) string {
	return valuesFile(t, map[string]any{"settings": map[string]any{"clusterName": "prod-eu-1"}})
}

// render runs helm template on the chart with the values files and returns the objects.
func render(t testing.TB, valueFiles ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := renderErr(t, valueFiles...)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	return out
}

func renderErr(t testing.TB, valueFiles ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	args := []string{"template", "stratos", repoPath(t, "charts", "stratos"), "--namespace", releaseNamespace}
	for _, f := range valueFiles {
		args = append(args, "--values", f)
	}
	manifest, err := helm(t, args...)
	if err != nil {
		return nil, err
	}
	return decodeObjects(t, manifest), nil
}

// decodeObjects reads a stream of YAML documents, skipping empty ones.
func decodeObjects(t testing.TB, rendered string) []*unstructured.Unstructured {
	t.Helper()
	objects, err := manifest.Decode(strings.NewReader(rendered))
	if err != nil {
		t.Fatalf("decoding the manifest: %v", err)
	}
	return objects
}

// readObjects reads a YAML file of objects.
func readObjects(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeObjects(t, string(data))
}

// ofKind returns the objects of a kind.
func ofKind(objects []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objects {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// convert turns an unstructured object into a typed one.
func convert[T any](t testing.TB, obj *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, out); err != nil {
		t.Fatalf("converting %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
	return out
}

// deployment returns the one Deployment of a rendering.
func deployment(t testing.TB, objects []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	deployments := ofKind(objects, "Deployment")
	if len(deployments) != 1 {
		t.Fatalf("rendered %d Deployments, want 1", len(deployments))
	}
	return convert[appsv1.Deployment](t, deployments[0])
}

package chart_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/harness"
)

// The prometheus-operator release whose ServiceMonitor and PrometheusRule CRDs the
// chart's are checked against, and the hash the Go checksum database records for its
// module.
const (
	prometheusOperatorModule  = "github.com/prometheus-operator/prometheus-operator"
	prometheusOperatorVersion = "v0.85.0"
	prometheusOperatorSum     = "h1:M5xLCLEoaW2IJfnuCwFzzpL+jSVQu3KGT84Pye+fW8s="
	serviceMonitorCRDPath     = "example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"
	prometheusRuleCRDPath     = "example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml"
)

// prometheusOperatorCRD returns one of prometheus-operator's own CRDs, the file at path in
// its Go module (downloaded through the module proxy once, then read from the module
// cache).
func prometheusOperatorCRD(t testing.TB, path string) *unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", prometheusOperatorModule+"@"+prometheusOperatorVersion)
	// Outside the project's module, so that its go.mod is neither read nor changed. The
	// hash is checked below against the pinned one instead of the checksum database.
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GONOSUMDB="+prometheusOperatorModule)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s@%s: %v\n%s", prometheusOperatorModule, prometheusOperatorVersion, err, out)
	}
	var module struct{ Dir, Sum, Error string }
	if err := json.Unmarshal(out, &module); err != nil || module.Error != "" {
		t.Fatalf("go mod download: %v %s", err, module.Error)
	}
	if module.Sum != prometheusOperatorSum {
		t.Fatalf("%s@%s has hash %s, want %s", prometheusOperatorModule, prometheusOperatorVersion, module.Sum, prometheusOperatorSum)
	}
	crds := readObjects(t, filepath.Join(module.Dir, path))
	if len(crds) != 1 {
		t.Fatalf("%s holds %d objects, want one CRD", path, len(crds))
	}
	return crds[0]
}

// installCRD creates a CRD and waits until the API server serves it.
func installCRD(ctx context.Context, t testing.TB, c client.Client, crd *unstructured.Unstructured) {
	t.Helper()
	if err := c.Create(ctx, crd.DeepCopy()); err != nil {
		t.Fatalf("installing CRD %s: %v", crd.GetName(), err)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.GetName()}, got); err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", crd.GetName(), err)
	}
}

// Every object the chart renders, with the default and with the non-default values, is
// accepted by the real API server: the CRDs are installed from the rendering (with
// prometheus-operator's ServiceMonitor and PrometheusRule CRDs), the release's namespaces
// are made, and every other object is created with a server-side dry run, so admission
// and validation run in full and nothing is stored.
func TestRenderedObjectsPassServerSideDryRun(t *testing.T) {
	env := harness.StartWithoutCRDsT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := adminClient(t, env)
	renderings := map[string][]*unstructured.Unstructured{"defaults": render(t, minimal(t)), "non-default": render(t, nonDefaultValues)}

	for _, crd := range ofKind(renderings["defaults"], "CustomResourceDefinition") {
		installCRD(ctx, t, c, crd)
	}
	installCRD(ctx, t, c, prometheusOperatorCRD(t, serviceMonitorCRDPath))
	installCRD(ctx, t, c, prometheusOperatorCRD(t, prometheusRuleCRDPath))
	for _, ns := range []string{releaseNamespace, "stratos-leases", "stratos-prepull"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	for name, objects := range renderings {
		t.Run(name, func(t *testing.T) {
			checked := 0
			for _, obj := range objects {
				if obj.GetKind() == "CustomResourceDefinition" {
					continue // installed above, for real
				}
				err := c.Create(ctx, obj.DeepCopy(), client.DryRunAll, client.FieldOwner("helm"))
				if err != nil {
					t.Errorf("%s: %v", describe(obj), err)
				}
				checked++
			}
			t.Logf("%d objects accepted by a server-side dry run", checked)
			if checked == 0 {
				t.Fatal("no object was checked")
			}
		})
	}

	// Nothing but the CRDs and namespaces was stored.
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("apps/v1")
	list.SetKind("DeploymentList")
	if err := c.List(ctx, list, client.InNamespace(releaseNamespace)); err != nil || len(list.Items) != 0 {
		t.Errorf("the dry run stored Deployments: %d (%v)", len(list.Items), err)
	}
}

// adminClient reaches the harness's API server as its administrator, with the Kubernetes,
// Stratos, CapacityBuffer and CustomResourceDefinition types.
func adminClient(t testing.TB, env *harness.Env) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1beta1.AddToScheme, autoscalingv1beta1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// describe names an object for messages.
func describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetKind() + " " + obj.GetName()
	}
	return fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
}

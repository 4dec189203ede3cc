// Package clusterapi_test runs Cluster API's real core controller manager against a real
// kube-apiserver, one API server and one manager for the package. First CAPI itself: its
// webhooks answer through the certificates the harness gives it, its conversion serves
// the older API version, and its controllers reconcile. Then Stratos on it: the
// operator's controllers in the test process with the Cluster API provider, and the
// simulator's infrastructure and bootstrap providers over a fake cloud, whose kubelets
// register the Machines' Nodes. Nothing runs kube-scheduler: the tests mark pods
// Unschedulable and bind them, as it would.
package clusterapi_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simprovider"
	"github.com/stratos-sh/stratos/test/harness"
)

var (
	env  *harness.Env
	capi *harness.ClusterAPI
	// c knows the Kubernetes kinds, CAPI's v1beta2 kinds, CRDs, the Stratos and the
	// simulator's kinds.
	c client.Client
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if env, err = harness.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	workDir, err := os.MkdirTemp("", "stratos-capi-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if capi, err = env.StartClusterAPI(ctx, workDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("API server started in %s; Cluster API installed in %s, its manager ready in %s\n",
		env.StartupTime.Round(time.Millisecond), capi.InstallTime.Round(time.Millisecond), capi.StartTime.Round(time.Millisecond))
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, apiextensionsv1.AddToScheme, v1beta1.AddToScheme, simprovider.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	// The tests read v1beta1 on purpose; the API server's deprecation warnings are noise.
	cfg.WarningHandlerWithContext = rest.NoWarnings{}
	if c, err = client.New(cfg, client.Options{Scheme: s}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := installInfraClusterCRD(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	simCtx, stopSim := context.WithCancel(context.Background())
	defer stopSim()
	started := time.Now()
	if err := startSimulatedCluster(simCtx, capi.Kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "starting the simulated cluster:", err)
		capi.PrintLog(os.Stderr)
		return 1
	}
	fmt.Printf("the simulated cluster's class is Ready after %s\n", time.Since(started).Round(time.Millisecond))
	code := m.Run()
	if err := capi.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code != 0 {
		capi.PrintLog(os.Stderr)
		fmt.Fprintf(os.Stderr, "kept %s for the logs\n", workDir)
		return code
	}
	os.RemoveAll(workDir)
	return code
}

// The infrastructure cluster kind the tests' Clusters refer to: a CRD with CAPI's
// contract label, which names the version CAPI uses for its group and kind.
const (
	infraGroup   = "infrastructure.test.stratos.sh"
	infraVersion = "v1alpha1"
	infraKind    = "TestInfraCluster"
)

func installInfraClusterCRD(ctx context.Context) error {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "testinfraclusters." + infraGroup,
			Labels: map[string]string{"cluster.x-k8s.io/v1beta2": infraVersion},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: infraGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: infraKind, ListKind: infraKind + "List", Plural: "testinfraclusters", Singular: "testinfracluster"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: infraVersion, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true),
				}},
			}},
		},
	}
	return harness.InstallCRDs(env.Config, crd)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// namespace creates a namespace for one test. At the test's end its Clusters and
// Machines are deleted and awaited, so that CAPI's controllers do not keep working on
// them for the next test, and then the namespace is deleted.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "capi-" + rand.String(6)}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		kinds := []struct {
			obj  client.Object
			list client.ObjectList
		}{{&clusterv1.Machine{}, &clusterv1.MachineList{}}, {&clusterv1.Cluster{}, &clusterv1.ClusterList{}}}
		for _, kind := range kinds {
			list := kind.list
			if err := c.DeleteAllOf(ctx, kind.obj, client.InNamespace(ns.Name)); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting the test's %T: %v", list, err)
			}
			err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				if err := c.List(ctx, list, client.InNamespace(ns.Name)); err != nil {
					return false, err
				}
				return meta.LenList(list) == 0, nil
			})
			if err != nil {
				t.Errorf("the test's %T are not gone: %v", list, err)
			}
		}
		if err := c.Delete(ctx, ns); err != nil {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

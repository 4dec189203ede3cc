// Package capinodeclass_test runs the ClusterAPINodeClass controller against a real API
// server with Cluster API's Cluster CRD (from the pinned CAPI release) and template CRDs
// of test providers, labelled for CAPI's contract as providers label theirs.
package capinodeclass_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/stratos-sh/stratos/internal/capicontract"
	"github.com/stratos-sh/stratos/internal/cloudprovider/clusterapi"
	"github.com/stratos-sh/stratos/internal/controllers/clusterapinodeclass"
	"github.com/stratos-sh/stratos/internal/scheme"
	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/stack"
)

// The test providers' groups.
const (
	infraGroup     = "infrastructure.test.stratos.sh"
	bootstrapGroup = "bootstrap.test.stratos.sh"
)

// fixture is an API server with the CRDs and the controller running.
type fixture struct {
	t   *testing.T
	ctx context.Context
	env *harness.Env
}

// noPower is a power interface that is never called: the controller only asks whether
// one exists.
type noPower struct{ clusterapi.Power }

func newFixture(t *testing.T) *fixture {
	t.Parallel()
	bin, err := harness.EnsureTools("capi-manager")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := &fixture{t: t, ctx: ctx, env: harness.StartT(t)}
	f.installFile(filepath.Join(bin, "capi-config", "crd", "cluster.x-k8s.io_clusters.yaml"))
	// A provider serving two versions, both for the contract; one serving a kind whose
	// CRD names no contract version; a bootstrap provider.
	f.installCRD(templateCRD(infraGroup, "TestMachineTemplate", map[string]string{capicontract.Label: "v1alpha1_v1beta1"}, "v1alpha1", "v1beta1"))
	f.installCRD(templateCRD(infraGroup, "PlainMachineTemplate", map[string]string{capicontract.Label: "v1beta1"}, "v1beta1"))
	f.installCRD(templateCRD(infraGroup, "UnlabelledMachineTemplate", nil, "v1beta1"))
	f.installCRD(templateCRD(bootstrapGroup, "TestConfigTemplate", map[string]string{capicontract.Label: "v1beta1"}, "v1beta1"))

	mgr, err := ctrl.NewManager(f.env.Config, manager.Options{
		Logger: stack.TestLogger(t), Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &clusterapinodeclass.ClusterAPIReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Resolver: capicontract.Resolver{Mapper: mgr.GetRESTMapper(), Reader: mgr.GetAPIReader()},
		// Only TestMachines can be powered off and on.
		Powers:   clusterapi.Powers{{Group: infraGroup, Kind: "TestMachine"}: noPower{}},
		Recorder: mgr.GetEventRecorder("stratos"),
		Options:  clusterapinodeclass.Options{RetryFailed: 200 * time.Millisecond},
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return f
}

// templateCRD is a namespaced CRD of a template kind serving versions (the last one
// stored), with labels, whose objects keep any spec.
func templateCRD(group, kind string, labels map[string]string, versions ...string) *unstructured.Unstructured {
	plural := fmt.Sprintf("%ss", strings.ToLower(kind))
	var served []any
	for i, v := range versions {
		served = append(served, map[string]any{"name": v, "served": true, "storage": i == len(versions)-1,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced", "versions": served,
			"names": map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind)}},
	}}
	crd.SetLabels(labels)
	return crd
}

// installFile installs the CRD of a YAML file.
func (f *fixture) installFile(path string) {
	f.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		f.t.Fatal(err)
	}
	f.installCRD(crd)
}

// installCRD installs a CRD.
func (f *fixture) installCRD(crd *unstructured.Unstructured) {
	f.t.Helper()
	typed := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(crd.Object, typed); err != nil {
		f.t.Fatalf("CRD %s: %v", crd.GetName(), err)
	}
	if err := harness.InstallCRDs(f.env.Config, typed); err != nil {
		f.t.Fatalf("installing CRD %s: %v", crd.GetName(), err)
	}
}

// create creates obj.
func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := f.env.Client.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// template creates a template of a test provider in namespace default.
func (f *fixture) template(group, version, kind, name string) {
	f.t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{}}}}}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
	obj.SetNamespace("default")
	obj.SetName(name)
	f.create(obj)
}

// eventually polls cond every 50 ms until it holds, for up to 30 s.
func (f *fixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	if err := wait.PollUntilContextTimeout(f.ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		f.t.Fatalf("timed out waiting until %s", what)
	}
}

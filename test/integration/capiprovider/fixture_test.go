// Package capiprovider_test runs the Cluster API cloud provider against a real API
// server with CAPI's CRDs and small infrastructure and bootstrap kinds of the test's
// own: the Machines, bootstrap configs and infrastructure machines it makes are what
// CAPI's controllers would find. No CAPI controller runs: the tests set the status
// fields CAPI and the infrastructure would set, and check what Stratos reads from them.
package capiprovider_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/cloudprovider/clusterapi"
	"github.com/stratos-sh/stratos/test/harness"
)

const (
	clusterName = "test"
	namespace   = "capi"
	// capiCluster is the CAPI Cluster the classes name.
	capiCluster = "work"
	// contractLabel marks a CRD's versions that follow CAPI's v1beta2 contract.
	contractLabel = "cluster.x-k8s.io/v1beta2"
)

// The test's provider kinds: a bootstrap config of kubeadm's shape, an infrastructure
// machine Stratos cannot power, and one shaped as the simulator's SimMachine, which it
// powers through spec.online.
var (
	configTemplateKind  = schema.GroupVersionKind{Group: "bootstrap.test.stratos.sh", Version: "v1alpha1", Kind: "TestConfigTemplate"}
	configKind          = schema.GroupVersionKind{Group: "bootstrap.test.stratos.sh", Version: "v1alpha1", Kind: "TestConfig"}
	machineTemplateKind = schema.GroupVersionKind{Group: "infrastructure.test.stratos.sh", Version: "v1alpha1", Kind: "TestMachineTemplate"}
	machineKind         = schema.GroupVersionKind{Group: "infrastructure.test.stratos.sh", Version: "v1alpha1", Kind: "TestMachine"}
	simTemplateKind     = schema.GroupVersionKind{Group: "sim.stratos.sh", Version: "v1alpha1", Kind: "SimMachineTemplate"}
	simMachineKind      = schema.GroupVersionKind{Group: "sim.stratos.sh", Version: "v1alpha1", Kind: "SimMachine"}
	// uncontractedTemplateKind's CRD lacks CAPI's contract label.
	uncontractedTemplateKind = schema.GroupVersionKind{Group: "infrastructure.test.stratos.sh", Version: "v1alpha1", Kind: "LegacyMachineTemplate"}
)

// The templates every test reads.
const (
	configTemplate  = "workers"
	machineTemplate = "racks"
	simTemplate     = "sims"
)

var (
	// cfg reaches the API server as an administrator.
	cfg *rest.Config
	// c reaches the API server with the Kubernetes, Stratos, CAPI and CRD types.
	c client.Client
	// provider is the Cluster API provider of cluster clusterName.
	provider *clusterapi.Provider
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, err := harness.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if err := setUp(env); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// setUp installs CAPI's CRDs and the test's, and creates the namespace, the Cluster and
// the templates.
func setUp(env *harness.Env) error {
	bin, err := harness.EnsureTools("capi-manager")
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(bin, "capi-config", "crd")},
		ErrorIfPathMissing: true,
		CRDs: []*apiextensionsv1.CustomResourceDefinition{
			providerCRD(configTemplateKind, true), providerCRD(configKind, true),
			providerCRD(machineTemplateKind, true), providerCRD(machineKind, true),
			providerCRD(simTemplateKind, true), providerCRD(simMachineKind, true),
			providerCRD(uncontractedTemplateKind, false),
		},
	}); err != nil {
		return fmt.Errorf("installing CRDs: %w", err)
	}
	cfg = env.Config
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1beta1.AddToScheme, apiextensionsv1.AddToScheme, clusterapi.AddToScheme} {
		if err := add(s); err != nil {
			return err
		}
	}
	if c, err = client.New(env.Config, client.Options{Scheme: s}); err != nil {
		return err
	}
	if provider, err = clusterapi.New(clusterapi.Options{ClusterName: clusterName, Client: c}); err != nil {
		return err
	}
	ctx := context.Background()
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		// No CAPI controller runs; the Cluster is paused as one that none reconciles.
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: capiCluster}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}},
		templateOf(configTemplateKind, configTemplate, map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"tier": "worker"}},
			"spec": map[string]any{"joinConfiguration": map[string]any{"nodeRegistration": map[string]any{
				"kubeletExtraArgs": []any{map[string]any{"name": "max-pods", "value": "50"}}}}},
		}),
		templateOf(machineTemplateKind, machineTemplate, map[string]any{"spec": map[string]any{"image": "ubuntu-24.04"}}),
		templateOf(simTemplateKind, simTemplate, map[string]any{"spec": map[string]any{"online": true}}),
		templateOf(uncontractedTemplateKind, "legacy", map[string]any{"spec": map[string]any{}}),
	}
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// providerCRD is a namespaced CRD of a provider's kind that keeps any field, with a
// status subresource, labelled for CAPI's contract or not.
func providerCRD(gvk schema.GroupVersionKind, contract bool) *apiextensionsv1.CustomResourceDefinition {
	plural := strings.ToLower(gvk.Kind) + "s"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + gvk.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gvk.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: gvk.Kind, ListKind: gvk.Kind + "List", Plural: plural, Singular: strings.ToLower(gvk.Kind)},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: gvk.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: ptr.To(true)},
						"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
	if contract {
		crd.Labels = map[string]string{contractLabel: gvk.Version}
	}
	return crd
}

// templateOf is a template whose spec.template is template.
func templateOf(gvk schema.GroupVersionKind, name string, template map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": template}}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// ref is a class's reference to a template.
func ref(gvk schema.GroupVersionKind, name string) v1beta1.ClusterAPITemplateReference {
	return v1beta1.ClusterAPITemplateReference{APIGroup: gvk.Group, Kind: gvk.Kind, Name: name}
}

// classOver is a class of the test's Cluster and bootstrap template over an
// infrastructure template, with two types: small in rack-a and rack-b, and large.
func classOver(infrastructure v1beta1.ClusterAPITemplateReference) *v1beta1.ClusterAPINodeClass {
	return &v1beta1.ClusterAPINodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "metal"},
		Spec: v1beta1.ClusterAPINodeClassSpec{
			Cluster:                   v1beta1.ClusterAPIClusterReference{Namespace: namespace, Name: capiCluster},
			BootstrapTemplateRef:      ref(configTemplateKind, configTemplate),
			InfrastructureTemplateRef: infrastructure,
			Version:                   "v1.37.2",
			InstanceTypes: []v1beta1.ClusterAPIInstanceType{
				{Name: "small", Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")},
					Zones: []string{"rack-b", "rack-a"}, PricePerHour: "0.10", StoppedPricePerHour: "0.01"},
				{Name: "large", Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")},
					Zones: []string{"rack-a"}, PricePerHour: "0.40"},
			},
		},
	}
}

// launchOf is the request of a claim's launch, with client token token.
func launchOf(class *v1beta1.ClusterAPINodeClass, claim, pool, token string) *cloudprovider.CreateRequest {
	return &cloudprovider.CreateRequest{
		ClientToken: token,
		NodeClass:   class,
		Labels: map[string]string{
			v1beta1.LabelNodePool: pool, v1beta1.LabelNodeClaim: claim,
			"node-role.kubernetes.io/worker": "", "team": "blue",
		},
		Taints: []corev1.Taint{v1beta1.StandbyTaint},
		Tags:   map[string]string{v1beta1.TagCluster: clusterName, v1beta1.TagNodePool: pool, v1beta1.TagNodeClaim: claim},
	}
}

package capacitybuffer_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/capacitybuffer"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/stack"
)

// The CRD's rules refuse, at admission, a buffer that names both a PodTemplate and a
// workload, one that names neither, a percentage without a workload, and a buffer of a
// PodTemplate with no number of chunks; each with its message.
func TestAdmissionRefusesInvalidBuffers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	template := &autoscalingv1beta1.LocalObjectRef{Name: "t"}
	workload := &autoscalingv1beta1.ScalableRef{APIGroup: "apps", Kind: "Deployment", Name: "d"}
	for _, tc := range []struct {
		name    string
		spec    autoscalingv1beta1.CapacityBufferSpec
		message string
	}{
		{"both refs", autoscalingv1beta1.CapacityBufferSpec{PodTemplateRef: template, ScalableRef: workload, Replicas: ptr.To[int32](1)},
			"exactly one of podTemplateRef and scalableRef must be set"},
		{"neither ref", autoscalingv1beta1.CapacityBufferSpec{Replicas: ptr.To[int32](1)},
			"exactly one of podTemplateRef and scalableRef must be set"},
		{"percentage without scalableRef", autoscalingv1beta1.CapacityBufferSpec{PodTemplateRef: template, Replicas: ptr.To[int32](1), Percentage: ptr.To[int32](10)},
			"percentage applies only to a scalableRef"},
		{"podTemplateRef without replicas or limits", autoscalingv1beta1.CapacityBufferSpec{PodTemplateRef: template},
			"a buffer of a podTemplateRef needs replicas or limits"},
		{"negative replicas", autoscalingv1beta1.CapacityBufferSpec{PodTemplateRef: template, Replicas: ptr.To[int32](-1)},
			"spec.replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "invalid", Namespace: "default"}, Spec: tc.spec}
			err := env.Client.Create(ctx, b)
			if err == nil {
				_ = env.Client.Delete(ctx, b)
				t.Fatal("the API server accepted the buffer")
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("the refusal %q does not say %q", err, tc.message)
			}
		})
	}
	valid := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "valid", Namespace: "default"},
		Spec: autoscalingv1beta1.CapacityBufferSpec{ScalableRef: workload, Percentage: ptr.To[int32](10)}}
	if err := env.Client.Create(ctx, valid); err != nil {
		t.Fatalf("the API server refused a valid buffer: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), valid) })
	if got := ptr.Deref(valid.Spec.ProvisioningStrategy, ""); got != autoscalingv1beta1.StrategyActiveCapacity {
		t.Errorf("provisioningStrategy defaults to %q, want %q", got, autoscalingv1beta1.StrategyActiveCapacity)
	}
}

// In a cluster without the CapacityBuffer CRD, the operator runs without buffers: it
// starts, its caches sync and it stops without an error (a controller of a kind the
// cluster does not serve would fail the manager's start).
func TestOperatorRunsWithoutTheCRD(t *testing.T) {
	bare := harness.StartWithoutCRDsT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if strings.Contains(filepath.Base(path), "capacitybuffers") {
			continue
		}
		installCRD(t, bare.Config, path)
	}

	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(bare.Config)))
	if installed, err := capacitybuffer.Installed(mapper); err != nil || installed {
		t.Fatalf("Installed = %v, %v in a cluster without the CRD; want false", installed, err)
	}
	op := stack.StartOperator(t, bare, fakecloud.New(fakecloud.Options{}), stack.OperatorOptions{})
	if !op.Manager.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the operator's caches did not sync")
	}
	op.Stop() // reports the manager's error, if any, through t.Errorf

	mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(env.Config)))
	if installed, err := capacitybuffer.Installed(mapper); err != nil || !installed {
		t.Errorf("Installed = %v, %v in a cluster with the CRD; want true", installed, err)
	}
}

// installCRD installs the CRD in the file.
func installCRD(t *testing.T, cfg *rest.Config, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := harness.InstallCRDs(cfg, crd); err != nil {
		t.Fatalf("installing %s: %v", crd.Name, err)
	}
}

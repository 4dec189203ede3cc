package capacitybuffer_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/test/harness"
)

// A workload of a kind Stratos does not watch is read through its spec.template and
// spec.replicas: a Widget of 10 replicas gives 3 chunks for 30%. A Widget without a pod
// template is refused with ScalableKindUnsupported, as is a cluster-scoped kind.
func TestOtherWorkloadKindsAreReadUnstructured(t *testing.T) {
	installWidgetCRD(t)
	f := newFixture(t)
	widget := func(name string, withTemplate bool) *unstructured.Unstructured {
		spec := map[string]any{"replicas": int64(10)}
		if withTemplate {
			spec["template"] = map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "w", "image": "widget:1",
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}}}},
			}
		}
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "spec": spec}}
		w.SetName(name)
		return w
	}
	f.create(widget("full", true))
	f.create(widget("empty", false))
	buffer := func(name, kind, workload string) *autoscalingv1beta1.CapacityBuffer {
		return &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: autoscalingv1beta1.CapacityBufferSpec{
			ScalableRef: &autoscalingv1beta1.ScalableRef{APIGroup: "example.com", Kind: kind, Name: workload}, Percentage: ptr.To[int32](30)}}
	}
	f.create(buffer("full", "Widget", "full"))
	f.create(buffer("empty", "Widget", "empty"))
	cluster := buffer("cluster", "ClusterWidget", "any")
	f.create(cluster)

	f.eventually("3 chunks for 30% of the Widget's 10 replicas", func() bool {
		return f.readyWith("full", metav1.ConditionTrue, "Resolved") && f.replicas("full") == 3
	})
	f.eventually("the Widget without a template refused", func() bool {
		return f.readyWith("empty", metav1.ConditionFalse, "ScalableKindUnsupported")
	})
	f.eventually("the cluster-scoped kind refused", func() bool {
		return f.readyWith("cluster", metav1.ConditionFalse, "ScalableKindUnsupported")
	})
}

// installWidgetCRD installs the namespaced kind Widget and the cluster-scoped kind
// ClusterWidget of group example.com, whose objects keep any spec, once per process.
func installWidgetCRD(t *testing.T) {
	t.Helper()
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, kind := range []struct {
		singular, plural, kind string
		scope                  apiextensionsv1.ResourceScope
	}{
		{"widget", "widgets", "Widget", apiextensionsv1.NamespaceScoped},
		{"clusterwidget", "clusterwidgets", "ClusterWidget", apiextensionsv1.ClusterScoped},
	} {
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: kind.plural + ".example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "example.com", Scope: kind.scope,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: kind.plural, Singular: kind.singular, Kind: kind.kind, ListKind: kind.kind + "List"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true)}}}}}},
			},
		}
		crds = append(crds, crd)
	}
	if err := harness.InstallCRDs(env.Config, crds...); err != nil {
		t.Fatal(err)
	}
}

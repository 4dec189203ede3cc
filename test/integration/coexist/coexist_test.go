// Package coexist_test runs Stratos beside another autoscaler's traces against a real
// kube-apiserver with the fake cloud: Karpenter's NodePools (a CRD of Karpenter's group
// and kind, written here) and Cluster Autoscaler's status ConfigMap. Under --pod-scope=auto
// Stratos serves only pods that opt in while either is there, and every pod once it is
// gone. Nothing runs kube-scheduler, so the tests mark pods Unschedulable themselves.
//
// The tests are serial: they read stratos_pod_scope, which is one gauge per process.
package coexist_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podscope"
	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/stack"
)

// The scope auto looks every 200 ms here, so that a test sees a change at once.
const lookInterval = 200 * time.Millisecond

// startAuto restarts the fixture's operator with --pod-scope=auto.
func startAuto(f *stack.Fixture) {
	opts := f.Opts
	opts.PodScope, opts.PodScopeInterval = podscope.Auto, lookInterval
	f.RestartOperator(opts)
}

// installKarpenterCRD installs a CRD of Karpenter's group and kind serving version,
// schemaless: Stratos reads only that such objects exist.
func installKarpenterCRD(t *testing.T, cfg *rest.Config, version string) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "nodepools.karpenter.sh"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "karpenter.sh",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "nodepools", Singular: "nodepool", Kind: "NodePool", ListKind: "NodePoolList"},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
	if err := harness.InstallCRDs(cfg, crd); err != nil {
		t.Fatalf("installing the Karpenter NodePool CRD: %v", err)
	}
}

// karpenterNodePool is a NodePool as Karpenter's docs write one, in version.
func karpenterNodePool(version string) *unstructured.Unstructured {
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/" + version,
		"kind":       "NodePool",
		"metadata":   map[string]any{"name": "default"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
			"requirements": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}},
		}}},
	}}
	return pool
}

// pendingPod creates a small pod, tuned by tune, and marks it Unschedulable as
// kube-scheduler would.
func pendingPod(f *stack.Fixture, name string, tune func(*corev1.PodSpec)) *corev1.Pod {
	f.T.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		}}}},
	}
	if tune != nil {
		tune(&pod.Spec)
	}
	f.Create(pod)
	f.MarkUnschedulable(pod)
	return pod
}

// placedOn returns the claim Stratos placed a pod on, as the operator's nominations
// tell (a lone pod on its claim gets no reservation toleration to read); "" when it
// placed it nowhere. A nomination holds until the pod binds, and 5 s after its claim
// runs: what polls for it has that long at least.
func placedOn(f *stack.Fixture, pod *corev1.Pod) string {
	f.T.Helper()
	claim, _ := f.Op.State.Nominated(pod.UID)
	return claim
}

// eventsAbout returns the reasons of the Events about a pod.
func eventsAbout(f *stack.Fixture, pod *corev1.Pod) []string {
	f.T.Helper()
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events, client.InNamespace(pod.Namespace)); err != nil {
		f.T.Fatal(err)
	}
	var reasons []string
	for _, e := range events.Items {
		if e.Regarding.Kind == "Pod" && e.Regarding.Name == pod.Name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

// waitForScope waits until stratos_pod_scope shows scope for reason.
func waitForScope(f *stack.Fixture, scope podscope.Scope, reason string) {
	f.T.Helper()
	f.Eventually("stratos_pod_scope is "+string(scope)+" for "+reason, func() bool {
		m := stack.Metric(f.T, "stratos_pod_scope", map[string]string{"scope": string(scope), "reason": reason})
		return m != nil && m.GetGauge().GetValue() == 1
	})
}

// servedOnlyOptedIn creates the pods left alone first, then the opted-in one, and waits
// until Stratos placed the opted-in pod. Its pass came after the others were marked
// Unschedulable (the operator's cache sees a kind's changes in the order they were
// made), so that they are still without a claim and without an Event shows that Stratos
// left them alone, with no sleep.
func servedOnlyOptedIn(f *stack.Fixture, optedIn func(*corev1.PodSpec), leftAlone map[string]func(*corev1.PodSpec)) []*corev1.Pod {
	f.T.Helper()
	var alone []*corev1.Pod
	for name, tune := range leftAlone {
		alone = append(alone, pendingPod(f, name, tune))
	}
	opted := pendingPod(f, "opted-in", optedIn)
	f.Eventually("the opted-in pod is placed on a claim", func() bool { return placedOn(f, opted) != "" })
	for _, pod := range alone {
		if claim := placedOn(f, pod); claim != "" {
			f.T.Errorf("pod %s, which does not opt in, was placed on claim %s while another autoscaler runs", pod.Name, claim)
		}
		if reasons := eventsAbout(f, pod); len(reasons) > 0 {
			f.T.Errorf("Stratos wrote Events %v about pod %s, which it leaves to the other autoscaler", reasons, pod.Name)
		}
	}
	return alone
}

// Beside Karpenter (its NodePools exist), auto serves only a pod that selects a Stratos
// pool; once Karpenter's last NodePool is deleted it serves the plain pod too.
func TestAutoLeavesPlainPodsToKarpenterUntilItsNodePoolsGo(t *testing.T) {
	f := stack.NewSerialFixture(t, nil)
	installKarpenterCRD(t, f.Env.Config, "v1")
	karpenter := karpenterNodePool("v1")
	f.Create(karpenter)
	startAuto(f)
	f.Pool("web", 0, nil)
	waitForScope(f, podscope.OptedIn, podscope.ReasonKarpenter)

	alone := servedOnlyOptedIn(f,
		func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{v1beta1.LabelNodePool: "web"} },
		map[string]func(*corev1.PodSpec){"plain": nil},
	)

	if err := f.Env.Client.Delete(f.Ctx, karpenter); err != nil {
		t.Fatal(err)
	}
	waitForScope(f, podscope.All, podscope.ReasonNoneFound)
	f.Eventually("the plain pod is placed on a claim once Karpenter is gone", func() bool { return placedOn(f, alone[0]) != "" })
}

// Beside Cluster Autoscaler (its status ConfigMap exists), auto serves only a pod that
// tolerates a Stratos pool's taint (any pool may take it), not one that tolerates every taint as DaemonSets'
// pods do, nor a plain one; once the ConfigMap is gone it serves them all.
func TestAutoLeavesPlainPodsToClusterAutoscalerUntilItsStatusGoes(t *testing.T) {
	f := stack.NewSerialFixture(t, nil)
	status := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "cluster-autoscaler-status"}, Data: map[string]string{"status": "Cluster-autoscaler status at ..."}}
	f.Create(status)
	startAuto(f)
	// A pool any pod fits, so that only the scope keeps a pod from Stratos; and one whose
	// taint pods tolerate to opt in.
	f.Pool("web", 0, nil)
	dedicated := v1beta1.Taint{Key: "example.com/dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
	f.Pool("batch", 0, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.Taints = []v1beta1.Taint{dedicated} })
	waitForScope(f, podscope.OptedIn, podscope.ReasonClusterAutoscaler)

	alone := servedOnlyOptedIn(f,
		func(s *corev1.PodSpec) {
			s.Tolerations = []corev1.Toleration{{Key: dedicated.Key, Operator: corev1.TolerationOpEqual, Value: dedicated.Value, Effect: dedicated.Effect}}
		},
		map[string]func(*corev1.PodSpec){
			"plain":                nil,
			"tolerates-all-taints": func(s *corev1.PodSpec) { s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} },
		},
	)

	if err := f.Env.Client.Delete(f.Ctx, status); err != nil {
		t.Fatal(err)
	}
	waitForScope(f, podscope.All, podscope.ReasonNoneFound)
	for _, pod := range alone {
		f.Eventually("pod "+pod.Name+" is placed on a claim once Cluster Autoscaler is gone", func() bool { return placedOn(f, pod) != "" })
	}
}

package podscope

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func podWith(tune func(*corev1.PodSpec)) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"}}
	tune(&pod.Spec)
	return pod
}

func requiring(key string, op corev1.NodeSelectorOperator, values ...string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}},
			},
		}}}
	}
}

func tolerating(t corev1.Toleration) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) { s.Tolerations = append(s.Tolerations, t) }
}

func TestOptsIn(t *testing.T) {
	gpuTaint := corev1.Taint{Key: "example.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	pools := []corev1.Taint{gpuTaint}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"no selector, affinity or toleration", podWith(func(*corev1.PodSpec) {}), false},
		{"nodeSelector on the pool", podWith(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"stratos.sh/nodepool": "web"} }), true},
		{"nodeSelector on the capacity type", podWith(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"stratos.sh/capacity-type": "spot"} }), true},
		{"nodeSelector on an instance label", podWith(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"stratos.sh/instance-family": "m7g"} }), true},
		{"nodeSelector on Karpenter's pool", podWith(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"karpenter.sh/nodepool": "web"} }), false},
		{"nodeSelector on a well-known label", podWith(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"kubernetes.io/arch": "arm64"} }), false},
		{"nodeSelector on a look-alike domain", podWith(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"notstratos.sh/nodepool": "web"} }), false},
		{"required affinity naming a stratos.sh key in one term", podWith(requiring("stratos.sh/nodepool", corev1.NodeSelectorOpIn, "web", "batch")), true},
		{"required affinity that a stratos.sh key exists", podWith(requiring("stratos.sh/capacity-type", corev1.NodeSelectorOpExists)), true},
		{"required affinity on other keys", podWith(requiring("karpenter.sh/capacity-type", corev1.NodeSelectorOpIn, "spot")), false},
		{"preferred affinity on the pool", podWith(func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "stratos.sh/nodepool", Operator: corev1.NodeSelectorOpIn, Values: []string{"web"}}}},
			}}}}
		}), false},
		{"toleration of a pool's taint", podWith(tolerating(corev1.Toleration{Key: "example.com/gpu", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule})), true},
		{"toleration that the pool's taint key exists", podWith(tolerating(corev1.Toleration{Key: "example.com/gpu", Operator: corev1.TolerationOpExists})), true},
		{"toleration of the key with another value", podWith(tolerating(corev1.Toleration{Key: "example.com/gpu", Operator: corev1.TolerationOpEqual, Value: "false", Effect: corev1.TaintEffectNoSchedule})), false},
		{"toleration of another taint", podWith(tolerating(corev1.Toleration{Key: "example.com/batch", Operator: corev1.TolerationOpExists})), false},
		{"toleration of everything", podWith(tolerating(corev1.Toleration{Operator: corev1.TolerationOpExists})), false},
		{"toleration of every NoSchedule taint", podWith(tolerating(corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OptsIn(tc.pod, pools); got != tc.want {
				t.Errorf("OptsIn = %v, want %v", got, tc.want)
			}
		})
	}
}

// Only the taints nodes keep count: a pod that tolerates a startup taint has not chosen
// Stratos's nodes by it.
func TestPoolTaintsAreTemplateTaintsOnly(t *testing.T) {
	pools := []v1beta1.NodePool{{Spec: v1beta1.NodePoolSpec{Template: v1beta1.NodeClaimTemplate{
		Spec: v1beta1.NodeClaimTemplateSpec{
			Taints:        []v1beta1.Taint{{Key: "example.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
			StartupTaints: []v1beta1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}},
		},
	}}}}
	taints := PoolTaints(pools)
	if len(taints) != 1 || taints[0].Key != "example.com/gpu" {
		t.Fatalf("PoolTaints = %v, want the template taint only", taints)
	}
	cilium := podWith(tolerating(corev1.Toleration{Key: "node.cilium.io/agent-not-ready", Operator: corev1.TolerationOpExists}))
	if OptsIn(cilium, taints) {
		t.Errorf("a pod tolerating a startup taint opts in")
	}
}

func TestFilter(t *testing.T) {
	plain := podWith(func(*corev1.PodSpec) {})
	plain.Name = "plain"
	opted := podWith(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"stratos.sh/nodepool": "web"} })
	opted.Name = "opted"
	pods := []*corev1.Pod{plain, opted}
	if got := Filter(All, pods, nil); len(got) != 2 {
		t.Errorf("all serves %d pods, want 2", len(got))
	}
	if got := Filter(OptedIn, pods, nil); len(got) != 1 || got[0].Name != "opted" {
		t.Errorf("opted-in serves %v, want the opted-in pod only", got)
	}
}

func TestParse(t *testing.T) {
	for _, s := range []string{"auto", "all", "opted-in"} {
		if got, err := Parse(s); err != nil || string(got) != s {
			t.Errorf("Parse(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "All", "optedin", "none"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

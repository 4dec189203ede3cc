package clusterapi

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// kubeadmConfigKind is CAPI's kubeadm bootstrap config, whose shape other bootstrap
// providers (and the simulator's) follow.
const kubeadmConfigKind = "KubeadmConfig"

// nodeLabelsArg is the kubelet flag that registers the Node with labels.
const nodeLabelsArg = "node-labels"

// hasKubeadmShape reports whether a bootstrap config takes kubeadm's join configuration:
// a KubeadmConfig, or a config whose template gave it a joinConfiguration.
func hasKubeadmShape(config *unstructured.Unstructured) bool {
	if config.GetKind() == kubeadmConfigKind {
		return true
	}
	_, found, _ := unstructured.NestedFieldNoCopy(config.Object, "spec", "joinConfiguration")
	return found
}

// withNodeRegistration makes a bootstrap config of kubeadm's shape register its Node
// with the launch's labels and taints and run its kubelet with the launch's
// configuration: spec.joinConfiguration.nodeRegistration's taints get the taints, and
// its kubeletExtraArgs (a list of name and value, as in v1beta2) the node-labels flag
// with the labels the kubelet may set itself and the flags of the kubelet
// configuration (kubeletFlags). The template's own taints, labels and flags stay unless
// the launch sets the same. A config of another shape is left as it is: the lifecycle
// controller sets the labels and taints on the Node once it registers.
func withNodeRegistration(config *unstructured.Unstructured, labels map[string]string, taints []corev1.Taint, kubelet *v1beta1.KubeletConfiguration) error {
	if !hasKubeadmShape(config) {
		return nil
	}
	path := []string{"spec", "joinConfiguration", "nodeRegistration"}
	registration, _, err := unstructured.NestedMap(config.Object, path...)
	if err != nil {
		return err
	}
	if registration == nil {
		registration = map[string]any{}
	}
	merged, err := mergedTaints(registration["taints"], taints)
	if err != nil {
		return err
	}
	if len(merged) > 0 {
		registration["taints"] = merged
	}
	registration["kubeletExtraArgs"] = withKubeletArgs(registration["kubeletExtraArgs"], cloudprovider.RegistrationLabels(labels), kubeletFlags(kubelet))
	return unstructured.SetNestedMap(config.Object, registration, path...)
}

// mergedTaints are the template's taints, but for those the launch sets again (the same
// key and effect), and the launch's.
func mergedTaints(templateTaints any, taints []corev1.Taint) ([]any, error) {
	existing, _ := templateTaints.([]any)
	var out []any
	for _, t := range existing {
		m, _ := t.(map[string]any)
		if slices.ContainsFunc(taints, func(own corev1.Taint) bool {
			return m["key"] == own.Key && m["effect"] == string(own.Effect)
		}) {
			continue
		}
		out = append(out, t)
	}
	for i := range taints {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&taints[i])
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// withKubeletArgs is a kubeletExtraArgs list with the flags set, each in place of the
// template's flag of its name, and the node-labels flag set to the template's node
// labels with these over them.
func withKubeletArgs(templateArgs any, labels, flags map[string]string) []any {
	existing, _ := templateArgs.([]any)
	all := map[string]string{}
	var out []any
	for _, a := range existing {
		arg, _ := a.(map[string]any)
		name, _ := arg["name"].(string)
		if name == nodeLabelsArg {
			value, _ := arg["value"].(string)
			maps.Copy(all, parseNodeLabels(value))
			continue
		}
		if _, replaced := flags[name]; !replaced {
			out = append(out, a)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		out = append(out, map[string]any{"name": name, "value": flags[name]})
	}
	maps.Copy(all, labels)
	if len(all) == 0 {
		return out
	}
	return append(out, map[string]any{"name": nodeLabelsArg, "value": NodeLabelsValue(all)})
}

// NodeLabelsValue is the value of the kubelet's --node-labels flag for labels: k=v
// pairs, sorted by key so that a config made twice is the same, joined by commas.
func NodeLabelsValue(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	return strings.Join(pairs, ",")
}

// parseNodeLabels reads a --node-labels value.
func parseNodeLabels(value string) map[string]string {
	out := map[string]string{}
	for pair := range strings.SplitSeq(value, ",") {
		if k, v, ok := strings.Cut(pair, "="); ok && k != "" {
			out[k] = v
		}
	}
	return out
}

package ec2machines

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// parseLabels parses the kubelet's --node-labels: key=value pairs separated by commas.
func parseLabels(value string) (map[string]string, error) {
	labels := map[string]string{}
	if value == "" {
		return labels, nil
	}
	for _, pair := range strings.Split(value, ",") {
		key, val, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", pair)
		}
		if err := checkLabel(key, val); err != nil {
			return nil, err
		}
		if _, dup := labels[key]; dup {
			return nil, fmt.Errorf("label %s is set twice", key)
		}
		labels[key] = val
	}
	return labels, nil
}

// checkLabel refuses a label the kubelet would not register its Node with.
func checkLabel(key, value string) error {
	if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
		return fmt.Errorf("label key %q: %s", key, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsValidLabelValue(value); len(msgs) > 0 {
		return fmt.Errorf("label %s value %q: %s", key, value, strings.Join(msgs, "; "))
	}
	if !kubeletMaySet(key) {
		return fmt.Errorf("the kubelet may not set label %s on its Node: kubernetes.io and k8s.io labels are limited to its own and those under node.kubernetes.io and kubelet.kubernetes.io", key)
	}
	return nil
}

// kubeletOwnLabels are the kubernetes.io labels a kubelet may set on its Node.
var kubeletOwnLabels = []string{
	corev1.LabelHostname, corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
	corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
	corev1.LabelInstanceType, corev1.LabelInstanceTypeStable, corev1.LabelOSStable, corev1.LabelArchStable,
	"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
}

// kubeletMaySet reports whether a kubelet accepts the label key in --node-labels: keys
// outside the kubernetes.io and k8s.io namespaces, its own labels, and those under
// node.kubernetes.io and kubelet.kubernetes.io.
func kubeletMaySet(key string) bool {
	namespace, _, ok := strings.Cut(key, "/")
	if !ok {
		return true
	}
	reserved := false
	for _, domain := range []string{"kubernetes.io", "k8s.io"} {
		if namespace == domain || strings.HasSuffix(namespace, "."+domain) {
			reserved = true
		}
	}
	return !reserved || slices.Contains(kubeletOwnLabels, key) ||
		namespace == "node.kubernetes.io" || namespace == "kubelet.kubernetes.io"
}

// parseTaints parses the kubelet's --register-with-taints: key[=value]:Effect separated
// by commas.
func parseTaints(value string) ([]corev1.Taint, error) {
	var taints []corev1.Taint
	if value == "" {
		return nil, nil
	}
	for _, spec := range strings.Split(value, ",") {
		keyValue, effect, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("%q has no effect", spec)
		}
		key, val, _ := strings.Cut(keyValue, "=")
		switch corev1.TaintEffect(effect) {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("%q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", spec, effect)
		}
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			return nil, fmt.Errorf("taint key %q: %s", key, strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(val); len(msgs) > 0 {
			return nil, fmt.Errorf("taint %s value %q: %s", key, val, strings.Join(msgs, "; "))
		}
		taint := corev1.Taint{Key: key, Value: val, Effect: corev1.TaintEffect(effect)}
		if slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) }) {
			return nil, fmt.Errorf("taint %s:%s is set twice", key, effect)
		}
		taints = append(taints, taint)
	}
	return taints, nil
}

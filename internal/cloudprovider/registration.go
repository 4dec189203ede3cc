package cloudprovider

import (
	"strings"

	kubeletapis "k8s.io/kubelet/pkg/apis"
)

// RegistrationLabels are the labels the kubelet can register its Node with: it refuses to
// start with a label under kubernetes.io or k8s.io that is not its own (such as
// node-role.kubernetes.io/worker), and Stratos sets those on the Node after it
// registers, as it sets every label of the claim.
func RegistrationLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if !isKubernetesLabel(k) || kubeletapis.IsKubeletLabel(k) {
			out[k] = v
		}
	}
	return out
}

// isKubernetesLabel reports whether a label key is in the kubernetes.io or k8s.io
// namespace or one under them.
func isKubernetesLabel(key string) bool {
	namespace, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, domain := range []string{"kubernetes.io", "k8s.io"} {
		if namespace == domain || strings.HasSuffix(namespace, "."+domain) {
			return true
		}
	}
	return false
}

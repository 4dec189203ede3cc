package aws

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// kubeletOwnLabels are the labels under kubernetes.io that a kubelet may set on its own
// Node (the kubelet's own list, in k8s.io/kubernetes/pkg/kubelet/apis, which is not a
// module to import).
var kubeletOwnLabels = map[string]bool{
	corev1.LabelHostname: true, corev1.LabelTopologyZone: true, corev1.LabelTopologyRegion: true,
	corev1.LabelFailureDomainBetaZone: true, corev1.LabelFailureDomainBetaRegion: true,
	corev1.LabelInstanceType: true, corev1.LabelInstanceTypeStable: true,
	corev1.LabelOSStable: true, corev1.LabelArchStable: true,
	"beta.kubernetes.io/os": true, "beta.kubernetes.io/arch": true,
}

// kubeletMaySet reports whether a kubelet may register its Node with the label: a
// kubelet refuses to start with a --node-labels label under kubernetes.io or k8s.io
// outside its own list and the kubelet.kubernetes.io and node.kubernetes.io
// namespaces, and the NodeRestriction admission plugin refuses node-restriction.kubernetes.io.
func kubeletMaySet(key string) bool {
	namespace, _, found := strings.Cut(key, "/")
	if !found {
		return true
	}
	if namespace == corev1.LabelNamespaceNodeRestriction || strings.HasSuffix(namespace, "."+corev1.LabelNamespaceNodeRestriction) {
		return false
	}
	if !inNamespace(namespace, "kubernetes.io") && !inNamespace(namespace, "k8s.io") {
		return true
	}
	return kubeletOwnLabels[key] || inNamespace(namespace, corev1.LabelNamespaceSuffixKubelet) || inNamespace(namespace, corev1.LabelNamespaceSuffixNode)
}

// inNamespace reports whether a label namespace is domain or one of its subdomains.
func inNamespace(namespace, domain string) bool {
	return namespace == domain || strings.HasSuffix(namespace, "."+domain)
}

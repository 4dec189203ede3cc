package aws

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/netip"
	"strings"

	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// Bottlerocket takes its user data as settings TOML, not as a MIME document: Stratos
// writes settings.kubernetes (the cluster, the Node's labels and taints) over the node
// class's own settings, whose other tables are kept as they are.

// nodeUserData is the user data of a node of class: Bottlerocket settings when the
// class's images are Bottlerocket's, else the MIME document of nodeadm's NodeConfig
// (AL2023 and custom images).
func nodeUserData(class *v1alpha1.AWSNodeClass, clusterName string, cluster ClusterDetails, labels map[string]string, taints []corev1.Taint) (string, error) {
	if len(class.Status.AMIs) > 0 && class.Status.AMIs[0].Family == FamilyBottlerocket {
		return bottlerocketUserData(clusterName, cluster, labels, taints, class.Spec.UserData)
	}
	return userData(clusterName, cluster, labels, taints, class.Spec.UserData)
}

// bottlerocketUserData is the user data of a Bottlerocket node: the class's own settings
// (TOML; nil: none) with the cluster's coordinates, labels and taints written over them.
func bottlerocketUserData(clusterName string, cluster ClusterDetails, labels map[string]string, taints []corev1.Taint, classUserData *string) (string, error) {
	doc := map[string]any{}
	if classUserData != nil && strings.TrimSpace(*classUserData) != "" {
		if err := toml.Unmarshal([]byte(*classUserData), &doc); err != nil {
			return "", fmt.Errorf("spec.userData: a Bottlerocket image takes settings TOML: %w", err)
		}
	}
	settings := table(doc, "settings")
	kubernetes := table(settings, "kubernetes")
	kubernetes["cluster-name"] = clusterName
	kubernetes["api-server"] = cluster.Endpoint
	kubernetes["cluster-certificate"] = base64.StdEncoding.EncodeToString(cluster.CertificateAuthority)
	if dns, ok := clusterDNS(cluster.ServiceCIDR); ok {
		kubernetes["cluster-dns-ip"] = dns
	}
	nodeLabels := table(kubernetes, "node-labels")
	maps.Copy(nodeLabels, toAny(labels))
	nodeTaints := table(kubernetes, "node-taints")
	for _, t := range taints {
		spec := t.Value + ":" + string(t.Effect)
		existing, _ := nodeTaints[t.Key].([]any)
		nodeTaints[t.Key] = append(existing, spec)
	}
	out, err := toml.Marshal(doc)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// table returns the table called name in parent, making it when missing.
func table(parent map[string]any, name string) map[string]any {
	if t, ok := parent[name].(map[string]any); ok {
		return t
	}
	t := map[string]any{}
	parent[name] = t
	return t
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// clusterDNS is the cluster DNS address EKS gives: the tenth address of the service
// CIDR (10.100.0.10 for 10.100.0.0/16).
func clusterDNS(serviceCIDR string) (string, bool) {
	prefix, err := netip.ParsePrefix(serviceCIDR)
	if err != nil {
		return "", false
	}
	addr := prefix.Masked().Addr()
	for range 10 {
		addr = addr.Next()
	}
	return addr.String(), true
}

package aws

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Bottlerocket takes its user data as settings TOML, not as a MIME document: Stratos
// writes its settings.kubernetes keys (the cluster, the Node's labels and taints, the
// pool's kubelet configuration) over the node class's own settings. Where both set a
// key, Stratos's value wins; tables (labels, taints, reservations, thresholds) are merged
// key by key, and the class's other keys and tables are kept as they are. That is how
// nodeadm merges the NodeConfig parts of AL2023's user data, Stratos's last.

// nodeUserData is the user data of a node of class in the form its image family takes
// (userDataFormOf): Bottlerocket settings, the MIME document of nodeadm's NodeConfig, or
// spec.userData as it is for an image declared Custom.
func nodeUserData(class *v1beta1.EC2NodeClass, join nodeJoin) (string, error) {
	var doc string
	var err error
	switch userDataFormOf(class) {
	case formBottlerocket:
		doc, err = bottlerocketUserData(join, class.Spec.UserData)
	case formAsIs:
		doc = ptr.Deref(class.Spec.UserData, "")
	default:
		doc, err = userData(join, class.Spec.UserData)
	}
	if err != nil {
		return "", err
	}
	return doc, fitsEC2(doc, class.Spec.UserData)
}

// maxUserData is EC2's limit on an instance's user data, in bytes before base64.
const maxUserData = 16 * 1024

// fitsEC2 refuses user data over EC2's limit before a launch is tried. The schema bounds
// the class's own part alone; what Stratos adds (the cluster's certificate, the Node's
// labels and taints, the kubelet configuration) depends on the pool, so only the whole
// document, here, can tell.
func fitsEC2(doc string, classUserData *string) error {
	if len(doc) <= maxUserData {
		return nil
	}
	own := 0
	if classUserData != nil {
		own = len(*classUserData)
	}
	return fmt.Errorf("the node's user data is %d bytes, over EC2's limit of %d: spec.userData is %d of them, "+
		"and Stratos adds the cluster's coordinates, the pool's labels, taints and kubelet configuration; make spec.userData smaller",
		len(doc), maxUserData, own)
}

// bottlerocketUserData is the user data of a Bottlerocket node: the class's own settings
// (TOML; nil: none) with the cluster's coordinates, labels, taints and kubelet
// configuration written over them.
func bottlerocketUserData(join nodeJoin, classUserData *string) (string, error) {
	doc := map[string]any{}
	if classUserData != nil && strings.TrimSpace(*classUserData) != "" {
		if err := toml.Unmarshal([]byte(*classUserData), &doc); err != nil {
			return "", fmt.Errorf("spec.userData: a Bottlerocket image takes settings TOML: %w", err)
		}
	}
	settings := table(doc, "settings")
	kubernetes := table(settings, "kubernetes")
	kubernetes["cluster-name"] = join.clusterName
	kubernetes["api-server"] = join.cluster.Endpoint
	kubernetes["cluster-certificate"] = base64.StdEncoding.EncodeToString(join.cluster.CertificateAuthority)
	if dns, ok := clusterDNS(join.cluster.ServiceCIDR); ok {
		kubernetes["cluster-dns-ip"] = dns
	}
	if labels := cloudprovider.RegistrationLabels(join.labels); len(labels) > 0 {
		maps.Copy(table(kubernetes, "node-labels"), toAny(labels))
	}
	// A taint is key = ["value:Effect", ...]; a taint with no value is ":Effect", which
	// Bottlerocket's settings model accepts (the value before the colon is optional).
	// The pool's taints of a key replace the class's of that key (on AL2023 the kubelet
	// takes the last --register-with-taints whole).
	taints := map[string][]any{}
	for _, t := range join.taints {
		taints[t.Key] = append(taints[t.Key], t.Value+":"+string(t.Effect))
	}
	if len(taints) > 0 {
		nodeTaints := table(kubernetes, "node-taints")
		for key, specs := range taints {
			nodeTaints[key] = specs
		}
	}
	if err := writeKubeletSettings(kubernetes, settingsOf(join.kubelet)); err != nil {
		return "", err
	}
	out, err := toml.Marshal(doc)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// bottlerocketReservable are the resources Bottlerocket's kube-reserved and
// system-reserved settings take.
var bottlerocketReservable = []string{"cpu", "memory", "ephemeral-storage"}

// writeKubeletSettings writes the kubelet configuration into settings.kubernetes under
// Bottlerocket's names: max-pods and the image GC thresholds as integers, the
// reservations, thresholds and grace periods as tables of strings.
func writeKubeletSettings(kubernetes map[string]any, s kubeletSettings) error {
	for _, reserved := range []map[string]string{s.KubeReserved, s.SystemReserved} {
		for resource := range reserved {
			if !slices.Contains(bottlerocketReservable, resource) {
				return fmt.Errorf("the kubelet configuration reserves %s, which Bottlerocket cannot: it reserves %s", resource, strings.Join(bottlerocketReservable, ", "))
			}
		}
	}
	if s.MaxPods != nil {
		kubernetes["max-pods"] = int64(*s.MaxPods)
	}
	if s.ImageGCHighThresholdPercent != nil {
		kubernetes["image-gc-high-threshold-percent"] = int64(*s.ImageGCHighThresholdPercent)
	}
	if s.ImageGCLowThresholdPercent != nil {
		kubernetes["image-gc-low-threshold-percent"] = int64(*s.ImageGCLowThresholdPercent)
	}
	for name, values := range map[string]map[string]string{
		"kube-reserved":              s.KubeReserved,
		"system-reserved":            s.SystemReserved,
		"eviction-hard":              s.EvictionHard,
		"eviction-soft":              s.EvictionSoft,
		"eviction-soft-grace-period": s.EvictionSoftGracePeriod,
	} {
		if len(values) > 0 {
			maps.Copy(table(kubernetes, name), toAny(values))
		}
	}
	return nil
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

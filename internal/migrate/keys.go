package migrate

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Karpenter's label keys and annotations that have a Stratos counterpart.
const (
	karpenterCapacityType = "karpenter.sh/capacity-type"
	karpenterNodePoolKey  = "karpenter.sh/nodepool"
	karpenterDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	karpenterInstancePfx  = "karpenter.k8s.aws/instance-"
	capacityTypeReserved  = "reserved"
)

// labelKeys maps a Karpenter label key to the Stratos key of the same meaning. Kubernetes'
// well-known keys map to themselves; their deprecated beta spellings, which Karpenter
// still accepts, map to the stable ones.
var labelKeys = func() map[string]string {
	m := map[string]string{
		karpenterCapacityType:             v1beta1.LabelCapacityType,
		karpenterNodePoolKey:              v1beta1.LabelNodePool,
		corev1.LabelInstanceTypeStable:    corev1.LabelInstanceTypeStable,
		corev1.LabelTopologyZone:          corev1.LabelTopologyZone,
		corev1.LabelArchStable:            corev1.LabelArchStable,
		corev1.LabelOSStable:              corev1.LabelOSStable,
		corev1.LabelInstanceType:          corev1.LabelInstanceTypeStable,
		corev1.LabelFailureDomainBetaZone: corev1.LabelTopologyZone,
		"beta.kubernetes.io/arch":         corev1.LabelArchStable,
		"beta.kubernetes.io/os":           corev1.LabelOSStable,
	}
	// Karpenter's AWS instance labels are Stratos's, in its own domain, by the same
	// suffix and with the same units (memory in MiB, bandwidth in Mbps).
	for _, key := range v1beta1.InstanceLabelKeys {
		m[karpenterInstancePfx+strings.TrimPrefix(key, v1beta1.Group+"/instance-")] = key
	}
	return m
}()

// noEquivalent says, for the Karpenter and well-known keys Stratos has no label for, why.
var noEquivalent = map[string]string{
	"karpenter.k8s.aws/instance-local-nvme":                      "Stratos has no label for an instance type's local NVMe storage",
	"karpenter.k8s.aws/instance-ebs-bandwidth":                   "Stratos has no label for an instance type's EBS bandwidth",
	"karpenter.k8s.aws/instance-gpu-manufacturer":                "Stratos labels GPUs by count and name only",
	"karpenter.k8s.aws/instance-gpu-memory":                      "Stratos labels GPUs by count and name only",
	"karpenter.k8s.aws/instance-cpu-manufacturer":                "Stratos has no label for the CPU's maker; constrain the instance family instead",
	"karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz":   "Stratos has no label for the CPU's clock speed",
	"karpenter.k8s.aws/instance-encryption-in-transit-supported": "Stratos has no label for encryption in transit",
	"karpenter.k8s.aws/instance-accelerator-name":                "Stratos has no labels for accelerators other than GPUs",
	"karpenter.k8s.aws/instance-accelerator-manufacturer":        "Stratos has no labels for accelerators other than GPUs",
	"karpenter.k8s.aws/instance-accelerator-count":               "Stratos has no labels for accelerators other than GPUs",
	"karpenter.k8s.aws/instance-capability-flex":                 "Stratos has no label for flex instance types",
	"karpenter.k8s.aws/instance-tenancy":                         "Stratos launches on shared tenancy only",
	"karpenter.k8s.aws/ec2nodeclass":                             "Stratos nodes carry no label of their node class",
	"karpenter.sh/nodeclaim":                                     "a claim's name differs between the two autoscalers; Stratos's is stratos.sh/nodeclaim",
	"karpenter.sh/initialized":                                   "Stratos marks initialisation on its NodeClaim, not with a node label",
	"karpenter.sh/registered":                                    "Stratos marks registration on its NodeClaim, not with a node label",
	"topology.kubernetes.io/region":                              "a Stratos cluster launches in its own region only; the node class's subnets decide the zones",
	"topology.k8s.aws/zone-id":                                   "Stratos constrains zones by name (topology.kubernetes.io/zone)",
	corev1.LabelHostname:                                         "a node's hostname is not known before launch",
}

// stratosKeyFor returns the Stratos key of a Karpenter label key, or "" and why there is
// none. Keys outside Karpenter's and Kubernetes' domains are the user's own: they have no
// counterpart to look up, and the caller decides.
func stratosKeyFor(key string) (stratos string, why string) {
	if s, ok := labelKeys[key]; ok {
		return s, ""
	}
	if why, ok := noEquivalent[key]; ok {
		return "", why
	}
	if isKarpenterKey(key) {
		return "", "Stratos has no label of that meaning"
	}
	return "", ""
}

// isKarpenterKey reports whether a label or annotation key is in one of Karpenter's domains.
func isKarpenterKey(key string) bool {
	return strings.HasPrefix(key, karpenterGroup+"/") || strings.HasPrefix(key, karpenterAWSGroup+"/")
}

// The checks of the Stratos CRD's rules on names, which the output must pass: the API
// server applies the same expressions (api/v1beta1, the XValidation markers).
var (
	qualifiedNamePattern = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	labelValuePattern    = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	dnsSubdomainPattern  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	wholeNumberPattern   = regexp.MustCompile(`^[0-9]{1,18}$`)
)

// qualifiedNameProblem says what is wrong with a label, annotation or taint key by the
// Stratos CRD's rules, or "" when nothing is.
func qualifiedNameProblem(key string) string {
	if len(key) > 316 || !qualifiedNamePattern.MatchString(key) {
		return "not a qualified name such as example.com/team"
	}
	if prefix, name, found := strings.Cut(key, "/"); found {
		if len(prefix) > 253 || len(name) > 63 {
			return "the name after the prefix is longer than 63 characters or the prefix longer than 253"
		}
	} else if len(key) > 63 {
		return "longer than 63 characters"
	}
	return ""
}

// labelValueOK reports whether a label (or taint) value passes the Stratos CRD's rule.
func labelValueOK(v string) bool {
	return v == "" || (len(v) <= 63 && labelValuePattern.MatchString(v))
}

// reservedLabelKeys are the node labels a Stratos pool cannot set: the cloud's.
var reservedLabelKeys = map[string]bool{
	corev1.LabelInstanceTypeStable: true, corev1.LabelTopologyZone: true, corev1.LabelTopologyRegion: true,
	corev1.LabelArchStable: true, corev1.LabelOSStable: true, corev1.LabelHostname: true,
}

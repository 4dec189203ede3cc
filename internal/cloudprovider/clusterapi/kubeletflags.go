package clusterapi

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// kubeletFlags are the kubelet flags, by name without dashes, that give a node the
// pool's kubelet configuration, as kubeadm passes kubeletExtraArgs: kubeadm's bootstrap
// has no place for a KubeletConfiguration of one node, and the kubelet still takes
// these flags over its configuration file. Unset fields give no flag, so the image's
// configuration keeps them. Map-valued flags list their pairs sorted, so that a config
// made twice is the same.
func kubeletFlags(k *v1beta1.KubeletConfiguration) map[string]string {
	flags := map[string]string{}
	if k == nil {
		return flags
	}
	if k.MaxPods != nil {
		flags["max-pods"] = strconv.Itoa(int(*k.MaxPods))
	}
	if len(k.KubeReserved) > 0 {
		flags["kube-reserved"] = resourcePairs(k.KubeReserved)
	}
	if len(k.SystemReserved) > 0 {
		flags["system-reserved"] = resourcePairs(k.SystemReserved)
	}
	if len(k.EvictionHard) > 0 {
		flags["eviction-hard"] = thresholdPairs(k.EvictionHard)
	}
	if len(k.EvictionSoft) > 0 {
		flags["eviction-soft"] = thresholdPairs(k.EvictionSoft)
	}
	if len(k.EvictionSoftGracePeriod) > 0 {
		periods := make(map[string]string, len(k.EvictionSoftGracePeriod))
		for signal, d := range k.EvictionSoftGracePeriod {
			periods[signal] = d.Duration.String()
		}
		flags["eviction-soft-grace-period"] = pairs(periods, "=")
	}
	if k.ImageGCHighThresholdPercent != nil {
		flags["image-gc-high-threshold"] = strconv.Itoa(int(*k.ImageGCHighThresholdPercent))
	}
	if k.ImageGCLowThresholdPercent != nil {
		flags["image-gc-low-threshold"] = strconv.Itoa(int(*k.ImageGCLowThresholdPercent))
	}
	return flags
}

// resourcePairs writes a resource list as --kube-reserved takes it: cpu=100m,memory=1Gi.
func resourcePairs(list corev1.ResourceList) string {
	values := make(map[string]string, len(list))
	for name, q := range list {
		values[string(name)] = q.String()
	}
	return pairs(values, "=")
}

// thresholdPairs writes eviction thresholds as --eviction-hard takes them:
// memory.available<100Mi,nodefs.available<10%.
func thresholdPairs(thresholds map[string]v1beta1.EvictionThreshold) string {
	values := make(map[string]string, len(thresholds))
	for signal, t := range thresholds {
		values[signal] = string(t)
	}
	return pairs(values, "<")
}

// pairs joins key, separator and value of each entry by commas, sorted by key.
func pairs(values map[string]string, separator string) string {
	out := make([]string, 0, len(values))
	for _, k := range slices.Sorted(maps.Keys(values)) {
		out = append(out, k+separator+values[k])
	}
	return strings.Join(out, ",")
}

package aws

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// kubeletSettings are the fields of the kubelet's own KubeletConfiguration
// (kubelet.config.k8s.io/v1beta1) a pool may set, under their names and in their value
// types there: quantities, thresholds and durations as strings. Unset fields are left
// out, so that the image keeps its defaults for them.
type kubeletSettings struct {
	MaxPods                     *int32            `json:"maxPods,omitempty"`
	SystemReserved              map[string]string `json:"systemReserved,omitempty"`
	KubeReserved                map[string]string `json:"kubeReserved,omitempty"`
	EvictionHard                map[string]string `json:"evictionHard,omitempty"`
	EvictionSoft                map[string]string `json:"evictionSoft,omitempty"`
	EvictionSoftGracePeriod     map[string]string `json:"evictionSoftGracePeriod,omitempty"`
	ImageGCHighThresholdPercent *int32            `json:"imageGCHighThresholdPercent,omitempty"`
	ImageGCLowThresholdPercent  *int32            `json:"imageGCLowThresholdPercent,omitempty"`
}

// settingsOf writes a pool's kubelet configuration in the kubelet's terms; nil is none.
func settingsOf(k *v1beta1.KubeletConfiguration) kubeletSettings {
	if k == nil {
		return kubeletSettings{}
	}
	s := kubeletSettings{
		MaxPods:                     k.MaxPods,
		SystemReserved:              quantities(k.SystemReserved),
		KubeReserved:                quantities(k.KubeReserved),
		EvictionHard:                thresholds(k.EvictionHard),
		EvictionSoft:                thresholds(k.EvictionSoft),
		ImageGCHighThresholdPercent: k.ImageGCHighThresholdPercent,
		ImageGCLowThresholdPercent:  k.ImageGCLowThresholdPercent,
	}
	if len(k.EvictionSoftGracePeriod) > 0 {
		s.EvictionSoftGracePeriod = map[string]string{}
		for signal, d := range k.EvictionSoftGracePeriod {
			s.EvictionSoftGracePeriod[signal] = d.Duration.String()
		}
	}
	return s
}

// nodeadmKubeletConfig is the kubelet configuration as nodeadm's NodeConfig carries it
// in spec.kubelet.config: a document of KubeletConfiguration fields, which nodeadm
// merges over the image's own, key by key. Nil when nothing is set.
func nodeadmKubeletConfig(k *v1beta1.KubeletConfiguration) (map[string]runtime.RawExtension, error) {
	doc, err := json.Marshal(settingsOf(k))
	if err != nil {
		return nil, err
	}
	var config map[string]runtime.RawExtension
	if err := json.Unmarshal(doc, &config); err != nil {
		return nil, err
	}
	if len(config) == 0 {
		return nil, nil
	}
	return config, nil
}

// quantities writes a resource list as the kubelet reads one: resource → quantity.
func quantities(list corev1.ResourceList) map[string]string {
	if len(list) == 0 {
		return nil
	}
	out := make(map[string]string, len(list))
	for name, q := range list {
		out[string(name)] = q.String()
	}
	return out
}

// thresholds writes eviction thresholds as the kubelet reads them: signal → threshold.
func thresholds(t map[string]v1beta1.EvictionThreshold) map[string]string {
	if len(t) == 0 {
		return nil
	}
	out := make(map[string]string, len(t))
	for signal, threshold := range t {
		out[signal] = string(threshold)
	}
	return out
}

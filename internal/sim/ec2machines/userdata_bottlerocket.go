package ec2machines

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// bottlerocketSettings is the part of Bottlerocket's settings TOML its kubelet registers
// with, under Bottlerocket's names.
type bottlerocketSettings struct {
	Settings struct {
		Kubernetes *struct {
			ClusterName string            `toml:"cluster-name"`
			APIServer   string            `toml:"api-server"`
			NodeLabels  map[string]string `toml:"node-labels"`
			// NodeTaints are key → "value:Effect" or a list of them.
			NodeTaints              map[string]any    `toml:"node-taints"`
			MaxPods                 *int64            `toml:"max-pods"`
			KubeReserved            map[string]string `toml:"kube-reserved"`
			SystemReserved          map[string]string `toml:"system-reserved"`
			EvictionHard            map[string]string `toml:"eviction-hard"`
			EvictionSoft            map[string]string `toml:"eviction-soft"`
			EvictionSoftGracePeriod map[string]string `toml:"eviction-soft-grace-period"`
			// The image GC thresholds are integers, or integers in strings (older user data).
			ImageGCHighThresholdPercent any `toml:"image-gc-high-threshold-percent"`
			ImageGCLowThresholdPercent  any `toml:"image-gc-low-threshold-percent"`
		} `toml:"kubernetes"`
	} `toml:"settings"`
}

// parseBottlerocket reads Bottlerocket's settings TOML as its kubelet would start with it.
func parseBottlerocket(raw []byte) (Registration, error) {
	var doc bottlerocketSettings
	if err := toml.Unmarshal(raw, &doc); err != nil {
		return Registration{}, fmt.Errorf("user data is neither a MIME document nor Bottlerocket settings TOML: %w", err)
	}
	k := doc.Settings.Kubernetes
	if k == nil || k.ClusterName == "" || k.APIServer == "" {
		return Registration{}, fmt.Errorf("the Bottlerocket settings name no cluster (settings.kubernetes.cluster-name and api-server): the kubelet would not join")
	}
	reg := Registration{Labels: map[string]string{}}
	for _, key := range slices.Sorted(maps.Keys(k.NodeLabels)) {
		if err := checkLabel(key, k.NodeLabels[key]); err != nil {
			return Registration{}, fmt.Errorf("node-labels: %w", err)
		}
		reg.Labels[key] = k.NodeLabels[key]
	}
	for _, key := range slices.Sorted(maps.Keys(k.NodeTaints)) {
		var specs []string
		switch v := k.NodeTaints[key].(type) {
		case string:
			specs = []string{v}
		case []any:
			for _, s := range v {
				spec, ok := s.(string)
				if !ok {
					return Registration{}, fmt.Errorf("node-taints: %s: %v is not a string", key, s)
				}
				specs = append(specs, spec)
			}
		default:
			return Registration{}, fmt.Errorf("node-taints: %s: want \"value:Effect\" or a list of them", key)
		}
		for _, spec := range specs {
			value, effect, ok := strings.Cut(spec, ":")
			if !ok {
				return Registration{}, fmt.Errorf("node-taints: %s = %q has no effect", key, spec)
			}
			taint := key + ":" + effect
			if value != "" {
				taint = key + "=" + value + ":" + effect
			}
			parsed, err := parseTaints(taint)
			if err != nil {
				return Registration{}, fmt.Errorf("node-taints: %w", err)
			}
			reg.Taints = append(reg.Taints, parsed...)
		}
	}
	// Bottlerocket reserves cpu, memory and ephemeral-storage only, and refuses settings
	// that reserve anything else.
	for _, reserved := range []map[string]string{k.KubeReserved, k.SystemReserved} {
		for name := range reserved {
			if !slices.Contains([]string{"cpu", "memory", "ephemeral-storage"}, name) {
				return Registration{}, fmt.Errorf("settings.kubernetes: Bottlerocket reserves no %s", name)
			}
		}
	}
	high, err := integerPercent(k.ImageGCHighThresholdPercent)
	if err != nil {
		return Registration{}, fmt.Errorf("image-gc-high-threshold-percent: %w", err)
	}
	low, err := integerPercent(k.ImageGCLowThresholdPercent)
	if err != nil {
		return Registration{}, fmt.Errorf("image-gc-low-threshold-percent: %w", err)
	}
	reg.Kubelet, err = rawKubeletSettings{
		MaxPods: k.MaxPods, KubeReserved: k.KubeReserved, SystemReserved: k.SystemReserved,
		EvictionHard: k.EvictionHard, EvictionSoft: k.EvictionSoft, EvictionSoftGracePeriod: k.EvictionSoftGracePeriod,
		ImageGCHighThresholdPercent: high, ImageGCLowThresholdPercent: low,
	}.check()
	if err != nil {
		return Registration{}, fmt.Errorf("settings.kubernetes: %w", err)
	}
	return reg, nil
}

// integerPercent reads an image GC threshold: an integer or an integer in a string.
func integerPercent(v any) (*int64, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case int64:
		return &v, nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return &n, nil
	default:
		return nil, fmt.Errorf("%v is not an integer", v)
	}
}

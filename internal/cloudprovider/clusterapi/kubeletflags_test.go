package clusterapi

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// A pool's kubelet configuration becomes the kubelet's flags in their own syntax: maps
// as sorted k=v pairs, eviction thresholds as signal<threshold.
func TestKubeletFlags(t *testing.T) {
	got := kubeletFlags(&v1beta1.KubeletConfiguration{
		MaxPods:                     ptr.To[int32](42),
		KubeReserved:                corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceCPU: resource.MustParse("100m")},
		SystemReserved:              corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("2Gi")},
		EvictionHard:                map[string]v1beta1.EvictionThreshold{"nodefs.available": "10%", "memory.available": "200Mi"},
		EvictionSoft:                map[string]v1beta1.EvictionThreshold{"memory.available": "500Mi"},
		EvictionSoftGracePeriod:     map[string]v1beta1.Duration{"memory.available": {Duration: 90 * time.Second}},
		ImageGCHighThresholdPercent: ptr.To[int32](85),
		ImageGCLowThresholdPercent:  ptr.To[int32](70),
	})
	want := map[string]string{
		"max-pods":                   "42",
		"kube-reserved":              "cpu=100m,memory=1Gi",
		"system-reserved":            "ephemeral-storage=2Gi",
		"eviction-hard":              "memory.available<200Mi,nodefs.available<10%",
		"eviction-soft":              "memory.available<500Mi",
		"eviction-soft-grace-period": "memory.available=1m30s",
		"image-gc-high-threshold":    "85",
		"image-gc-low-threshold":     "70",
	}
	if len(got) != len(want) {
		t.Errorf("flags %v, want %v", got, want)
	}
	for name, value := range want {
		if got[name] != value {
			t.Errorf("--%s=%q, want %q", name, got[name], value)
		}
	}
	if flags := kubeletFlags(nil); len(flags) != 0 {
		t.Errorf("no configuration gave flags %v", flags)
	}
	if flags := kubeletFlags(&v1beta1.KubeletConfiguration{}); len(flags) != 0 {
		t.Errorf("an empty configuration gave flags %v", flags)
	}
}

// The launch's kubelet flags replace the template's of the same name and keep the
// others; node-labels stays last.
func TestWithNodeRegistrationKubeletFlags(t *testing.T) {
	config := objectOf(t, `{"kind":"KubeadmConfig","spec":{"joinConfiguration":{"nodeRegistration":{
		"kubeletExtraArgs":[{"name":"max-pods","value":"50"},{"name":"cgroup-driver","value":"systemd"}]}}}}`)
	kubelet := &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](20), EvictionHard: map[string]v1beta1.EvictionThreshold{"memory.available": "5%"}}
	if err := withNodeRegistration(config, map[string]string{"team": "blue"}, nil, kubelet); err != nil {
		t.Fatal(err)
	}
	args, _, _ := unstructured.NestedSlice(config.Object, "spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs")
	got, _ := json.Marshal(args)
	want := `[{"name":"cgroup-driver","value":"systemd"},{"name":"eviction-hard","value":"memory.available\u003c5%"},{"name":"max-pods","value":"20"},{"name":"node-labels","value":"team=blue"}]`
	if string(got) != want {
		t.Errorf("kubeletExtraArgs\n%s\nwant\n%s", got, want)
	}
}

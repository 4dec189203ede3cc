package ec2machines

import (
	"encoding/base64"
	"maps"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// nodeConfigWith is a NodeConfig part with kubelet flags and a kubelet configuration
// (YAML under spec.kubelet.config, indented by six spaces).
func nodeConfigWith(config string, flags ...string) [2]string {
	part := nodeConfig(flags...)
	part[1] += "    config:\n" + config
	return part
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func ptr64(n int64) *int64 { return &n }

// kubeletSettingsDiff compares settings by value (quantities semantically).
func kubeletSettingsDiff(got, want KubeletSettings) string {
	return cmp.Diff(want, got,
		cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
		cmp.Comparer(func(a, b *big.Rat) bool { return (a == nil) == (b == nil) && (a == nil || a.Cmp(b) == 0) }))
}

func TestParseUserDataReadsTheKubeletConfiguration(t *testing.T) {
	userData := mimeDocument("\n", nodeConfigWith(`      maxPods: 20
      kubeReserved: {cpu: 250m, memory: 1Gi, pid: "1000"}
      systemReserved: {memory: 200Mi}
      evictionHard: {memory.available: 5%, nodefs.available: 2Gi, imagefs.available: 0%, pid.available: 7.5%}
      evictionSoft: {memory.available: 1Gi}
      evictionSoftGracePeriod: {memory.available: 1m30s}
      imageGCHighThresholdPercent: 90
      imageGCLowThresholdPercent: 70
      serializeImagePulls: false
`, `--node-labels=a=1`))
	reg, err := ParseUserData(userData)
	if err != nil {
		t.Fatal(err)
	}
	want := KubeletSettings{
		MaxPods:        ptr64(20),
		KubeReserved:   corev1.ResourceList{"cpu": q("250m"), "memory": q("1Gi"), "pid": q("1000")},
		SystemReserved: corev1.ResourceList{"memory": q("200Mi")},
		EvictionHard: map[string]Threshold{
			"memory.available": {Percent: big.NewRat(5, 1)}, "nodefs.available": {Quantity: ptrTo(q("2Gi"))},
			"imagefs.available": {}, "pid.available": {Percent: big.NewRat(15, 2)},
		},
		EvictionSoft:                map[string]Threshold{"memory.available": {Quantity: ptrTo(q("1Gi"))}},
		EvictionSoftGracePeriod:     map[string]time.Duration{"memory.available": 90 * time.Second},
		ImageGCHighThresholdPercent: ptr64(90),
		ImageGCLowThresholdPercent:  ptr64(70),
	}
	if diff := kubeletSettingsDiff(reg.Kubelet, want); diff != "" {
		t.Errorf("kubelet settings (-want +got):\n%s", diff)
	}
	if !maps.Equal(reg.Labels, map[string]string{"a": "1"}) {
		t.Errorf("labels %v", reg.Labels)
	}
}

// NodeConfig parts merge as nodeadm merges them, in order: flags add up, the last
// --register-with-taints wins whole, and the kubelet configuration merges key by key,
// the later part's value winning.
func TestParseUserDataMergesNodeConfigsInOrder(t *testing.T) {
	classPart := nodeConfigWith(`      maxPods: 50
      kubeReserved: {cpu: 100m, memory: 2Gi}
      evictionHard: {nodefs.available: 15%}
`, `--node-labels=team=platform,a=0`, `--register-with-taints=dedicated=x:NoSchedule`)
	stratosPart := nodeConfigWith(`      maxPods: 20
      kubeReserved: {memory: 1Gi}
`, `--node-labels=a=1`, `--register-with-taints=stratos.sh/standby:NoSchedule`)
	reg, err := ParseUserData(mimeDocument("\n", classPart, [2]string{"text/x-shellscript", "#!/bin/sh"}, stratosPart))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(reg.Labels, map[string]string{"team": "platform", "a": "1"}) {
		t.Errorf("labels %v, want the class's with the later value of a", reg.Labels)
	}
	if want := []corev1.Taint{{Key: "stratos.sh/standby", Effect: corev1.TaintEffectNoSchedule}}; !slices.Equal(reg.Taints, want) {
		t.Errorf("taints %v, want the last --register-with-taints only: %v", reg.Taints, want)
	}
	want := KubeletSettings{
		MaxPods:      ptr64(20),
		KubeReserved: corev1.ResourceList{"cpu": q("100m"), "memory": q("1Gi")},
		EvictionHard: map[string]Threshold{"nodefs.available": {Percent: big.NewRat(15, 1)}},
	}
	if diff := kubeletSettingsDiff(reg.Kubelet, want); diff != "" {
		t.Errorf("kubelet settings (-want +got):\n%s", diff)
	}
}

func bottlerocket(toml string) string { return base64.StdEncoding.EncodeToString([]byte(toml)) }

const bottlerocketCluster = `[settings.kubernetes]
cluster-name = 'prod'
api-server = 'https://example.eks.amazonaws.com'
`

func TestParseUserDataReadsBottlerocketSettings(t *testing.T) {
	reg, err := ParseUserData(bottlerocket(bottlerocketCluster + `max-pods = 20
image-gc-high-threshold-percent = 90
image-gc-low-threshold-percent = '70'

[settings.kubernetes.node-labels]
'stratos.sh/nodepool' = 'web'
team = 'platform'

[settings.kubernetes.node-taints]
'stratos.sh/standby' = [':NoSchedule']
gpu = ['true:NoExecute', 'true:NoSchedule']
dedicated = 'web:PreferNoSchedule'

[settings.kubernetes.kube-reserved]
memory = '1Gi'

[settings.kubernetes.system-reserved]
cpu = '100m'

[settings.kubernetes.eviction-hard]
'memory.available' = '200Mi'

[settings.kubernetes.eviction-soft]
'nodefs.available' = '15%'

[settings.kubernetes.eviction-soft-grace-period]
'nodefs.available' = '2m'

[settings.host-containers.admin]
enabled = true
`))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(reg.Labels, map[string]string{"stratos.sh/nodepool": "web", "team": "platform"}) {
		t.Errorf("labels %v", reg.Labels)
	}
	wantTaints := []corev1.Taint{
		{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoExecute},
		{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule},
		{Key: "stratos.sh/standby", Effect: corev1.TaintEffectNoSchedule},
	}
	if !slices.Equal(reg.Taints, wantTaints) {
		t.Errorf("taints %v, want %v", reg.Taints, wantTaints)
	}
	want := KubeletSettings{
		MaxPods:                     ptr64(20),
		KubeReserved:                corev1.ResourceList{"memory": q("1Gi")},
		SystemReserved:              corev1.ResourceList{"cpu": q("100m")},
		EvictionHard:                map[string]Threshold{"memory.available": {Quantity: ptrTo(q("200Mi"))}},
		EvictionSoft:                map[string]Threshold{"nodefs.available": {Percent: big.NewRat(15, 1)}},
		EvictionSoftGracePeriod:     map[string]time.Duration{"nodefs.available": 2 * time.Minute},
		ImageGCHighThresholdPercent: ptr64(90),
		ImageGCLowThresholdPercent:  ptr64(70),
	}
	if diff := kubeletSettingsDiff(reg.Kubelet, want); diff != "" {
		t.Errorf("kubelet settings (-want +got):\n%s", diff)
	}
}

// A kubelet configuration the kubelet (or Bottlerocket) would refuse at startup is
// refused, so the instance's kubelet never registers.
func TestParseUserDataRefusesABadKubeletConfiguration(t *testing.T) {
	al2023 := func(config string) string { return mimeDocument("\n", nodeConfigWith(config)) }
	for _, c := range []struct {
		name, userData, want string
	}{
		{"max pods zero", al2023("      maxPods: 0\n"), "maxPods 0"},
		{"max pods not a number", al2023("      maxPods: many\n"), "spec.kubelet.config"},
		{"an unknown reservation", al2023("      kubeReserved: {nvidia.com/gpu: '1'}\n"), "kubeReserved"},
		{"a bad quantity", al2023("      systemReserved: {memory: lots}\n"), "systemReserved"},
		{"an unknown signal", al2023("      evictionHard: {memory.free: 1Gi}\n"), "not an eviction signal"},
		{"a zero threshold", al2023("      evictionHard: {memory.available: 0Mi}\n"), "positive"},
		{"a percentage over 100", al2023("      evictionHard: {nodefs.available: 120%}\n"), "percentage"},
		{"a soft threshold without a grace period", al2023("      evictionSoft: {memory.available: 1Gi}\n"), "no evictionSoftGracePeriod"},
		{"a bad grace period", al2023("      evictionSoft: {memory.available: 1Gi}\n      evictionSoftGracePeriod: {memory.available: soon}\n"), "evictionSoftGracePeriod"},
		{"image GC low above high", al2023("      imageGCHighThresholdPercent: 60\n      imageGCLowThresholdPercent: 70\n"), "not below"},
		{"Bottlerocket without a cluster", bottlerocket("[settings.kubernetes]\nmax-pods = 10\n"), "name no cluster"},
		{"Bottlerocket reserving pids", bottlerocket(bottlerocketCluster + "[settings.kubernetes.kube-reserved]\npid = '100'\n"), "reserves no pid"},
		{"Bottlerocket taint without an effect", bottlerocket(bottlerocketCluster + "[settings.kubernetes.node-taints]\na = ['b']\n"), "has no effect"},
		{"Bottlerocket taint with a bad effect", bottlerocket(bottlerocketCluster + "[settings.kubernetes.node-taints]\na = ['b:Never']\n"), "effect"},
		{"Bottlerocket label the kubelet may not set", bottlerocket(bottlerocketCluster + "[settings.kubernetes.node-labels]\n'node-role.kubernetes.io/x' = ''\n"), "may not set"},
		{"Bottlerocket image GC threshold not a number", bottlerocket(bottlerocketCluster + "image-gc-high-threshold-percent = 'high'\n"), "not an integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseUserData(c.userData)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

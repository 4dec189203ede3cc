package aws

import (
	"encoding/base64"
	"maps"
	"math/big"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/ec2machines"
)

// classMIME is a node class's own user data for AL2023: a script and a NodeConfig that
// sets kubelet flags and configuration of its own, some of which the pool sets too.
const classMIME = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n" +
	"--XX\nContent-Type: text/x-shellscript\n\n#!/bin/bash\necho hello\n" +
	"--XX\nContent-Type: application/node.eks.aws\n\n" +
	"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n" +
	"    flags: [--node-labels=team=platform, --register-with-taints=x=y:NoSchedule]\n" +
	"    config:\n      maxPods: 50\n      kubeReserved: {cpu: 300m, memory: 3Gi}\n      evictionHard: {nodefs.available: 20%}\n" +
	"--XX--\n"

// classTOML is the same for Bottlerocket.
const classTOML = `[settings.host-containers.admin]
enabled = true

[settings.kubernetes]
max-pods = 50

[settings.kubernetes.node-labels]
team = "platform"

[settings.kubernetes.node-taints]
x = ["y:NoSchedule"]

[settings.kubernetes.kube-reserved]
cpu = "300m"
memory = "3Gi"

[settings.kubernetes.eviction-hard]
"nodefs.available" = "20%"
`

// poolKubelet is a pool's kubelet configuration that overlaps the class's.
func poolKubelet() *v1beta1.KubeletConfiguration {
	return &v1beta1.KubeletConfiguration{
		MaxPods:      ptr.To[int32](20),
		KubeReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
}

func TestUserDataWithTheClassOwnGolden(t *testing.T) {
	join := testJoin()
	join.kubelet = poolKubelet()
	own := classMIME
	doc, err := userData(join, &own)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "al2023-merged.mime", doc)
	own = classTOML
	if doc, err = bottlerocketUserData(join, &own); err != nil {
		t.Fatal(err)
	}
	golden(t, "bottlerocket-merged.toml", doc)
}

// What a node boots with when the class's user data and the pool both set something:
// read by the simulator's kubelets, which play nodeadm and Bottlerocket and share no code
// with the writer. On both image families the pool's values win where both set one,
// tables merge key by key, and what only the class sets stays.
func TestUserDataMergeAsTheNodeReadsIt(t *testing.T) {
	join := testJoin()
	join.kubelet = poolKubelet()
	for _, c := range []struct {
		family string
		write  func(nodeJoin, *string) (string, error)
		own    string
		// taints: on AL2023 the kubelet takes the last --register-with-taints whole; on
		// Bottlerocket node-taints is a table, the pool's keys replacing the class's.
		taints []corev1.Taint
	}{
		{"AL2023", userData, classMIME, join.taints},
		{"Bottlerocket", bottlerocketUserData, classTOML, append(slices.Clone(join.taints), corev1.Taint{Key: "x", Value: "y", Effect: corev1.TaintEffectNoSchedule})},
	} {
		t.Run(c.family, func(t *testing.T) {
			doc, err := c.write(join, &c.own)
			if err != nil {
				t.Fatal(err)
			}
			reg, err := ec2machines.ParseUserData(base64.StdEncoding.EncodeToString([]byte(doc)))
			if err != nil {
				t.Fatal(err)
			}
			wantLabels := maps.Clone(join.labels)
			wantLabels["team"] = "platform"
			if !maps.Equal(reg.Labels, wantLabels) {
				t.Errorf("labels %v, want the pool's and the class's %v", reg.Labels, wantLabels)
			}
			if !sameTaints(reg.Taints, c.taints) {
				t.Errorf("taints %v, want %v", reg.Taints, c.taints)
			}
			k := reg.Kubelet
			if k.MaxPods == nil || *k.MaxPods != 20 {
				t.Errorf("max pods %v, want the pool's 20", k.MaxPods)
			}
			cpu, memory := k.KubeReserved[corev1.ResourceCPU], k.KubeReserved[corev1.ResourceMemory]
			if len(k.KubeReserved) != 2 || !cpu.Equal(resource.MustParse("300m")) || !memory.Equal(resource.MustParse("1Gi")) {
				t.Errorf("kube-reserved %v, want the class's cpu and the pool's memory", k.KubeReserved)
			}
			if nodefs, ok := k.EvictionHard["nodefs.available"]; !ok || nodefs.Percent == nil || nodefs.Percent.Cmp(big.NewRat(20, 1)) != 0 {
				t.Errorf("eviction-hard %v, want the class's nodefs.available 20%%", k.EvictionHard)
			}
		})
	}
}

// sameTaints compares taints whatever their order.
func sameTaints(a, b []corev1.Taint) bool {
	key := func(t corev1.Taint) string { return t.ToString() }
	as, bs := make([]string, 0, len(a)), make([]string, 0, len(b))
	for _, t := range a {
		as = append(as, key(t))
	}
	for _, t := range b {
		bs = append(bs, key(t))
	}
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}

// Labels the kubelet refuses at startup (under kubernetes.io and k8s.io, outside its own)
// stay out of the user data, which a node then boots with; Stratos sets them on the Node
// after it registers.
func TestUserDataLeavesOutLabelsTheKubeletRefuses(t *testing.T) {
	join := testJoin()
	join.labels = map[string]string{
		"node-role.kubernetes.io/worker": "", "example.k8s.io/x": "1", "kubernetes.io/role": "node",
		"node.kubernetes.io/lifecycle": "spot", "team": "a", "stratos.sh/nodepool": "web",
	}
	want := map[string]string{"node.kubernetes.io/lifecycle": "spot", "team": "a", "stratos.sh/nodepool": "web"}
	for family, write := range map[string]func(nodeJoin, *string) (string, error){"AL2023": userData, "Bottlerocket": bottlerocketUserData} {
		doc, err := write(join, nil)
		if err != nil {
			t.Fatal(err)
		}
		reg, err := ec2machines.ParseUserData(base64.StdEncoding.EncodeToString([]byte(doc)))
		if err != nil {
			t.Fatalf("%s: a node cannot boot with the user data: %v", family, err)
		}
		if !maps.Equal(reg.Labels, want) {
			t.Errorf("%s: the Node registers with %v, want %v", family, reg.Labels, want)
		}
	}
}

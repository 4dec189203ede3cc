package ec2machines

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/moto"
)

// TestMachinesReportTheKubeletConfiguration launches instances in moto whose user data
// configure the kubelet, one of each image family, and one that configures nothing: each
// kubelet reports its type's shape under its own configuration.
func TestMachinesReportTheKubeletConfiguration(t *testing.T) {
	client := motoEC2(t)
	m := New(Options{EC2: client, ClusterName: cluster, Region: moto.Region, Clock: testingclock.NewFakeClock(epoch)})
	owned := map[string]string{v1beta1.TagCluster: cluster}
	al2023 := runInstance(t, client, "us-east-1a", "m5.large", mimeDocument("\n", nodeConfigWith(`      maxPods: 20
      kubeReserved: {memory: 1Gi}
      systemReserved: {cpu: 100m}
`, `--node-labels=team=a`)), owned)
	bottlerocketNode := runInstance(t, client, "us-east-1a", "m5.large", bottlerocket(bottlerocketCluster+`max-pods = 12

[settings.kubernetes.eviction-hard]
'memory.available' = '500Mi'

[settings.kubernetes.node-labels]
team = 'b'
`), owned)
	plain := runInstance(t, client, "us-east-1a", "m5.large", mimeDocument("\n", nodeConfig(`--node-labels=team=c`)), owned)
	poll(t, m)
	if problems := m.Problems(); len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}

	// m5.large: 2 vCPUs, 8192 MiB, 29 pods by default; nodeadm reserves 70m, 574Mi
	// (255 + 11 × 29) and evicts at 100Mi.
	for _, c := range []struct {
		name, id, team         string
		pods                   int64
		allocatableCPU, memory string
	}{
		{"AL2023", al2023, "a", 20, "1830m", "7068Mi"},
		{"Bottlerocket", bottlerocketNode, "b", 12, "1930m", "7118Mi"},
		{"no configuration", plain, "c", 29, "1930m", "7518Mi"},
	} {
		v := viewOf(t, m, c.id)
		if v.Labels["team"] != c.team {
			t.Errorf("%s: labels %v, want team=%s", c.name, v.Labels, c.team)
		}
		capacity, allocatable := v.InstanceType.Capacity, v.InstanceType.Allocatable()
		want := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(c.pods, resource.DecimalSI), corev1.ResourceCPU: resource.MustParse(c.allocatableCPU), corev1.ResourceMemory: resource.MustParse(c.memory)}
		got := corev1.ResourceList{corev1.ResourcePods: allocatable[corev1.ResourcePods], corev1.ResourceCPU: allocatable[corev1.ResourceCPU], corev1.ResourceMemory: allocatable[corev1.ResourceMemory]}
		if !maps.EqualFunc(got, want, func(a, b resource.Quantity) bool { return a.Equal(b) }) || capacity.Pods().Value() != c.pods {
			t.Errorf("%s: capacity %v allocatable %v; want %d pods and allocatable %v", c.name, capacity, allocatable, c.pods, want)
		}
	}
	if calls := m.Calls(); calls["DescribeInstanceTypes"] != 1 {
		t.Errorf("calls %v: the one type is described once for the three kubelets", calls)
	}
}

package scheduling

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// benchmarkCatalog has 400 instance types: type i has i+1 vCPU, 2(i+1) GiB and room
// for 10(i+1) pods, offered on demand in 3 zones at a price proportional to its size.
func benchmarkCatalog() []*cloudprovider.InstanceType {
	types := make([]*cloudprovider.InstanceType, 400)
	for i := range types {
		n := int64(i + 1)
		t := &cloudprovider.InstanceType{
			Name:         fmt.Sprintf("bench.%dx", n),
			Architecture: "amd64",
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewQuantity(n, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(2*n<<30, resource.BinarySI),
				corev1.ResourcePods:   *resource.NewQuantity(10*n, resource.DecimalSI),
			},
		}
		for _, zone := range []string{"zone-a", "zone-b", "zone-c"} {
			t.Offerings = append(t.Offerings, cloudprovider.Offering{Zone: zone, CapacityType: v1alpha1.CapacityTypeOnDemand, PricePerHour: 0.04 * float64(n), Available: true})
		}
		types[i] = t
	}
	return types
}

// benchmarkPods makes n pending pods in fifths: plain, zone spread, hostname spread, zone
// self-affinity and hostname self-anti-affinity, with requests drawn from a fixed seed.
func benchmarkPods(n int) []*corev1.Pod {
	rng := rand.New(rand.NewPCG(1, 2))
	cpus := []string{"100m", "250m", "500m", "1", "1.5"}
	memories := []string{"100Mi", "512Mi", "1Gi", "2Gi", "4Gi"}
	groups := []string{"plain", "zone-spread", "host-spread", "zone-affinity", "host-anti"}
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		group := groups[i*len(groups)/n]
		selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": group}}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", group, i), Namespace: "bench", Labels: map[string]string{"app": group}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(cpus[rng.IntN(len(cpus))]),
				corev1.ResourceMemory: resource.MustParse(memories[rng.IntN(len(memories))]),
			}}}}},
		}
		switch group {
		case "zone-spread", "host-spread":
			key := corev1.LabelTopologyZone
			if group == "host-spread" {
				key = corev1.LabelHostname
			}
			pod.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector}}
		case "zone-affinity":
			pod.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelTopologyZone, LabelSelector: selector}}}}
		case "host-anti":
			pod.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname, LabelSelector: selector}}}}
		}
		pods[i] = pod
	}
	return pods
}

func benchmarkInput(n int) Input {
	pool := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
	return Input{Pods: benchmarkPods(n), Pools: []Pool{{Pool: pool, InstanceTypes: benchmarkCatalog(), NodesLeft: -1}}}
}

func benchmarkScheduling(b *testing.B, n int) {
	in := benchmarkInput(n)
	var nodes int
	b.ResetTimer()
	for b.Loop() {
		r := Solve(in)
		if len(r.Unschedulable) > 0 {
			b.Fatalf("%d pods unschedulable: %v", len(r.Unschedulable), r.Unschedulable[0].Reasons)
		}
		nodes = len(r.Launches)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pods/sec")
	b.ReportMetric(float64(nodes), "nodes")
}

func BenchmarkScheduling1000(b *testing.B)  { benchmarkScheduling(b, 1000) }
func BenchmarkScheduling5000(b *testing.B)  { benchmarkScheduling(b, 5000) }
func BenchmarkScheduling20000(b *testing.B) { benchmarkScheduling(b, 20000) }

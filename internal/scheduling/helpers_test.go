package scheduling

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// instanceTypeOf makes an instance type with cpu and memory, offered on demand in zones
// at price.
func instanceTypeOf(name, cpu, memory string, price float64, zones ...string) *cloudprovider.InstanceType {
	if len(zones) == 0 {
		zones = []string{"zone-a", "zone-b", "zone-c"}
	}
	t := &cloudprovider.InstanceType{
		Name: name, Architecture: "amd64",
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse(memory),
			corev1.ResourcePods:   resource.MustParse("110"),
		},
	}
	for _, z := range zones {
		t.Offerings = append(t.Offerings, cloudprovider.Offering{Zone: z, CapacityType: v1beta1.CapacityTypeOnDemand, PricePerHour: price, Available: true})
	}
	return t
}

// smallCatalog has three sizes: 2, 4 and 8 CPU.
func smallCatalog() []*cloudprovider.InstanceType {
	return []*cloudprovider.InstanceType{
		instanceTypeOf("small", "2", "8Gi", 0.1),
		instanceTypeOf("medium", "4", "16Gi", 0.2),
		instanceTypeOf("large", "8", "32Gi", 0.4),
	}
}

func poolOf(name string, types []*cloudprovider.InstanceType) Pool {
	return Pool{Pool: &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}, InstanceTypes: types, NodesLeft: -1}
}

// podOf makes a pod in namespace default asking for cpu and memory, changed by opts.
func podOf(name, cpu, memory string, opts ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}}}}},
	}
	for _, opt := range opts {
		opt(pod)
	}
	return pod
}

func pods(n int, prefix, cpu, memory string, opts ...func(*corev1.Pod)) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = podOf(fmt.Sprintf("%s-%d", prefix, i), cpu, memory, opts...)
	}
	return out
}

func labelled(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels[k] = v }
}

func selecting(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		p.Spec.NodeSelector[k] = v
	}
}

func spreadOver(key string, when corev1.UnsatisfiableConstraintAction, app string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: when, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		})
	}
}

func podAffinity(key, app string, anti, preferred bool) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		term := corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &corev1.Affinity{}
		}
		a := p.Spec.Affinity
		switch {
		case anti && preferred:
			a.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term}}}
		case anti:
			a.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}
		case preferred:
			a.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term}}}
		default:
			a.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}
		}
	}
}

func tolerating(key string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	}
}

func hostPortOf(port int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port})
	}
}

// nodeOf makes a Ready node of cpu and memory in zone.
func nodeOf(name, cpu, memory, zone string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelTopologyZone: zone}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("110"),
		}},
	}
}

// claimOf makes a claim of a type in zone, standby or in flight.
func claimOf(name, cpu, memory, zone string, standby bool, price float64) Claim {
	return Claim{
		Claim:   &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}},
		Standby: standby,
		Labels:  map[string]string{corev1.LabelHostname: name, corev1.LabelTopologyZone: zone},
		Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("110"),
		},
		PricePerHour: price,
	}
}

// solve runs the simulation and checks its result with the independent verifier.
func solve(t *testing.T, in Input) Result {
	t.Helper()
	r := Solve(in)
	verify(t, in, r)
	return r
}

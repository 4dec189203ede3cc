package scheduling

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Resources: requests, init containers, overhead, extended resources and pod counts.
func TestResourcePredicates(t *testing.T) {
	gpuType := instanceTypeOf("gpu", "8", "32Gi", 2.0)
	gpuType.Capacity["example.com/gpu"] = resource.MustParse("1")
	tinyPods := instanceTypeOf("tiny-pods", "8", "32Gi", 0.05)
	tinyPods.Capacity[corev1.ResourcePods] = resource.MustParse("2")

	cases := []struct {
		name      string
		types     []*cloudprovider.InstanceType
		pods      []*corev1.Pod
		wantTypes []string // first instance type of each launch, in order
		wantNone  bool
	}{
		{"the cheapest type that holds the pod", smallCatalog(), pods(1, "p", "3", "1Gi"), []string{"medium"}, false},
		{"pods share a node up to its size", smallCatalog(), pods(3, "p", "2", "1Gi"), []string{"large"}, false},
		{"an init container bigger than the containers counts", smallCatalog(), []*corev1.Pod{podOf("init", "1", "1Gi", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}
		})}, []string{"medium"}, false},
		{"pod overhead counts", smallCatalog(), []*corev1.Pod{podOf("overhead", "1.5", "1Gi", func(p *corev1.Pod) {
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		})}, []string{"medium"}, false},
		{"an extended resource needs a type that has it", append(smallCatalog(), gpuType), []*corev1.Pod{podOf("gpu", "1", "1Gi", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("1")
		})}, []string{"gpu"}, false},
		{"the pod count of a type is a limit", []*cloudprovider.InstanceType{tinyPods}, pods(3, "p", "100m", "10Mi"), []string{"tiny-pods", "tiny-pods"}, false},
		{"a pod bigger than every type is unschedulable", smallCatalog(), pods(1, "p", "16", "1Gi"), nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := solve(t, Input{Pods: tc.pods, Pools: []Pool{poolOf("p", tc.types)}})
			if tc.wantNone {
				if len(r.Unschedulable) != len(tc.pods) {
					t.Fatalf("want every pod unschedulable, got %+v", r)
				}
				return
			}
			var got []string
			for _, l := range r.Launches {
				got = append(got, l.InstanceTypes[0])
			}
			if strings.Join(got, ",") != strings.Join(tc.wantTypes, ",") {
				t.Fatalf("launched %v, want %v", got, tc.wantTypes)
			}
		})
	}
}

// Three 1.5-CPU pods on 2-CPU types need three nodes.
func TestThreeBigPodsOnSmallTypesNeedThreeNodes(t *testing.T) {
	r := solve(t, Input{Pods: pods(3, "p", "1.5", "1Gi"), Pools: []Pool{poolOf("p", []*cloudprovider.InstanceType{instanceTypeOf("two", "2", "8Gi", 0.1)})}})
	if len(r.Launches) != 3 {
		t.Fatalf("%d nodes, want 3", len(r.Launches))
	}
}

// Node selectors and required node affinity narrow the types and zones of a launch.
func TestNodeAffinityPredicates(t *testing.T) {
	arm := instanceTypeOf("arm", "4", "16Gi", 0.15)
	arm.Architecture = "arm64"
	catalog := append(smallCatalog(), arm)
	t.Run("nodeSelector on architecture", func(t *testing.T) {
		r := solve(t, Input{Pods: []*corev1.Pod{podOf("p", "1", "1Gi", selecting(corev1.LabelArchStable, "arm64"))}, Pools: []Pool{poolOf("p", catalog)}})
		if len(r.Launches) != 1 || r.Launches[0].InstanceTypes[0] != "arm" || len(r.Launches[0].InstanceTypes) != 1 {
			t.Fatalf("launches %+v, want only arm", r.Launches)
		}
	})
	t.Run("nodeSelector on zone", func(t *testing.T) {
		r := solve(t, Input{Pods: []*corev1.Pod{podOf("p", "1", "1Gi", selecting(corev1.LabelTopologyZone, "zone-b"))}, Pools: []Pool{poolOf("p", catalog)}})
		if len(r.Launches) != 1 || strings.Join(r.Launches[0].Zones, ",") != "zone-b" {
			t.Fatalf("launches %+v, want zone-b", r.Launches)
		}
	})
	t.Run("required affinity NotIn", func(t *testing.T) {
		pod := podOf("p", "1", "1Gi", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"small", "arm"}}}}},
			}}}
		})
		r := solve(t, Input{Pods: []*corev1.Pod{pod}, Pools: []Pool{poolOf("p", catalog)}})
		if len(r.Launches) != 1 || r.Launches[0].InstanceTypes[0] != "medium" {
			t.Fatalf("launches %+v, want medium", r.Launches)
		}
	})
	t.Run("a node label the pool does not set", func(t *testing.T) {
		r := solve(t, Input{Pods: []*corev1.Pod{podOf("p", "1", "1Gi", selecting("example.com/team", "a"))}, Pools: []Pool{poolOf("p", catalog)}})
		if len(r.Unschedulable) != 1 || !strings.Contains(r.Unschedulable[0].Reasons["p"], "node selector") {
			t.Fatalf("want unschedulable for its node selector, got %+v", r)
		}
	})
	t.Run("a node label the pool template sets", func(t *testing.T) {
		pool := poolOf("p", catalog)
		pool.Pool.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": "a"}
		r := solve(t, Input{Pods: []*corev1.Pod{podOf("p", "1", "1Gi", selecting("example.com/team", "a"))}, Pools: []Pool{pool}})
		if len(r.Launches) != 1 {
			t.Fatalf("launches %+v", r.Launches)
		}
	})
}

// Taints repel pods that do not tolerate them; startup taints are not in the input.
func TestTaintPredicates(t *testing.T) {
	pool := poolOf("tainted", smallCatalog())
	pool.Pool.Spec.Template.Spec.Taints = []v1beta1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
	r := solve(t, Input{Pods: []*corev1.Pod{podOf("plain", "1", "1Gi"), podOf("tolerant", "1", "1Gi", tolerating("dedicated"))}, Pools: []Pool{pool}})
	if len(r.Launches) != 1 || r.Launches[0].Pods[0].Name != "tolerant" {
		t.Fatalf("launches %+v, want one for the tolerant pod", r.Launches)
	}
	if len(r.Unschedulable) != 1 || !strings.Contains(r.Unschedulable[0].Reasons["tainted"], "does not tolerate the pool's taint dedicated:NoSchedule") {
		t.Fatalf("unschedulable %+v", r.Unschedulable)
	}

	node := nodeOf("n", "8", "32Gi", "zone-a")
	node.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	r = solve(t, Input{Pods: []*corev1.Pod{podOf("p", "1", "1Gi")}, Nodes: []Node{{Node: node}}, Pools: []Pool{poolOf("p", smallCatalog())}})
	if len(r.Existing) != 0 || len(r.Launches) != 1 {
		t.Fatalf("a tainted node took a pod that does not tolerate it: %+v", r)
	}
}

// Two pods that bind the same host port cannot share a node.
func TestHostPorts(t *testing.T) {
	r := solve(t, Input{Pods: pods(2, "p", "100m", "10Mi", hostPortOf(8080)), Pools: []Pool{poolOf("p", smallCatalog())}})
	if len(r.Launches) != 2 {
		t.Fatalf("%d nodes for two pods on port 8080, want 2", len(r.Launches))
	}
}

// DaemonSets that would run on a new node take their share; others do not.
func TestDaemonSetOverhead(t *testing.T) {
	everywhere := podOf("agent", "1", "1Gi")
	armOnly := podOf("arm-agent", "1", "1Gi", selecting(corev1.LabelArchStable, "arm64"))
	catalog := []*cloudprovider.InstanceType{instanceTypeOf("two", "2", "8Gi", 0.1), instanceTypeOf("four", "4", "16Gi", 0.2)}
	r := solve(t, Input{Pods: pods(1, "p", "1.5", "1Gi"), Pools: []Pool{poolOf("p", catalog)}, DaemonSets: []*corev1.Pod{everywhere, armOnly}})
	if len(r.Launches) != 1 || r.Launches[0].InstanceTypes[0] != "four" {
		t.Fatalf("with a 1-CPU DaemonSet a 1.5-CPU pod needs the 4-CPU type; got %+v", r.Launches)
	}
}

// Existing capacity first, then claims in flight, then standby (cheapest first), then new.
func TestPlacementOrder(t *testing.T) {
	t.Run("a node with room", func(t *testing.T) {
		in := Input{Pods: pods(1, "p", "1", "1Gi"), Nodes: []Node{{Node: nodeOf("n", "4", "16Gi", "zone-a"), Pods: pods(1, "old", "2", "1Gi")}}, Pools: []Pool{poolOf("p", smallCatalog())}}
		r := solve(t, in)
		if r.Existing[in.Pods[0]] != "n" || len(r.Launches) != 0 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("a full node", func(t *testing.T) {
		in := Input{Pods: pods(1, "p", "3", "1Gi"), Nodes: []Node{{Node: nodeOf("n", "4", "16Gi", "zone-a"), Pods: pods(1, "old", "2", "1Gi")}}, Pools: []Pool{poolOf("p", smallCatalog())}}
		if r := solve(t, in); len(r.Existing) != 0 || len(r.Launches) != 1 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("standby before new, the cheapest first", func(t *testing.T) {
		in := Input{
			Pods:   pods(3, "p", "3", "1Gi"),
			Claims: []Claim{claimOf("dear", "4", "16Gi", "zone-a", true, 0.3), claimOf("cheap", "4", "16Gi", "zone-a", true, 0.2)},
			Pools:  []Pool{poolOf("p", smallCatalog())},
		}
		r := solve(t, in)
		if len(r.Starts) != 2 || r.Starts[0].Claim != "cheap" || len(r.Launches) != 1 {
			t.Fatalf("starts %+v launches %d; want both standby claims started, cheap first, and one launch", r.Starts, len(r.Launches))
		}
	})
	t.Run("in flight before standby", func(t *testing.T) {
		in := Input{
			Pods:   pods(1, "p", "1", "1Gi"),
			Claims: []Claim{claimOf("standby", "4", "16Gi", "zone-a", true, 0.2), claimOf("coming", "4", "16Gi", "zone-a", false, 0.2)},
			Pools:  []Pool{poolOf("p", smallCatalog())},
		}
		r := solve(t, in)
		if r.InFlight[in.Pods[0]] != "coming" || len(r.Starts) != 0 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("pools by weight", func(t *testing.T) {
		light, heavy := poolOf("light", smallCatalog()), poolOf("heavy", smallCatalog())
		heavy.Pool.Spec.Weight = 50
		r := solve(t, Input{Pods: pods(1, "p", "1", "1Gi"), Pools: []Pool{light, heavy}})
		if r.Launches[0].Pool != "heavy" {
			t.Fatalf("launched from %s, want heavy", r.Launches[0].Pool)
		}
	})
}

// Limits stop new claims; the reason says which.
func TestLimits(t *testing.T) {
	pool := poolOf("p", smallCatalog())
	pool.NodesLeft = 1
	r := solve(t, Input{Pods: pods(2, "p", "6", "1Gi"), Pools: []Pool{pool}})
	if len(r.Launches) != 1 || len(r.Unschedulable) != 1 || !strings.Contains(r.Unschedulable[0].Reasons["p"], "limits.nodes") {
		t.Fatalf("%+v", r)
	}
	pool = poolOf("p", smallCatalog())
	pool.Left = map[corev1.ResourceName]int64{corev1.ResourceCPU: 10000}
	r = solve(t, Input{Pods: pods(2, "p", "6", "1Gi"), Pools: []Pool{pool}})
	if len(r.Launches) != 1 || len(r.Unschedulable) != 1 || !strings.Contains(r.Unschedulable[0].Reasons["p"], "limits.cpu") {
		t.Fatalf("%+v", r)
	}
}

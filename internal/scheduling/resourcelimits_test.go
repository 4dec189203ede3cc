package scheduling

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

const gpu corev1.ResourceName = "nvidia.com/gpu"

// gpuCatalog is a CPU-only type and a one-GPU type, as the NVIDIA device plugin reports
// GPUs in a node's capacity.
func gpuCatalog() []*cloudprovider.InstanceType {
	gpuType := instanceTypeOf("g-1gpu", "8", "32Gi", 0.5)
	gpuType.Capacity[gpu] = resource.MustParse("1")
	return []*cloudprovider.InstanceType{instanceTypeOf("small", "2", "8Gi", 0.1), gpuType}
}

func askingGPUs(n int64) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[gpu] = *resource.NewQuantity(n, resource.DecimalSI)
	}
}

// A pool's limit on nvidia.com/gpu stops new claims once their GPUs would exceed it: with
// 2 GPUs left and one-GPU nodes, three pods of one GPU each get two nodes, and the third
// is unschedulable for the GPU limit. Pods without GPUs land on the CPU-only type, which
// takes none of the limit.
func TestAGPULimitStopsNewClaims(t *testing.T) {
	pool := poolOf("p", gpuCatalog())
	pool.Left = map[corev1.ResourceName]int64{gpu: 2}
	in := Input{Pods: append(pods(3, "train", "6", "1Gi", askingGPUs(1)), pods(2, "web", "1", "1Gi")...), Pools: []Pool{pool}}
	r := solve(t, in)
	gpuNodes := 0
	for _, l := range r.Launches {
		if l.InstanceTypes[0] == "g-1gpu" {
			gpuNodes++
		}
	}
	if gpuNodes != 2 {
		t.Fatalf("%d GPU nodes launched, want 2 under a limit of 2 GPUs: %+v", gpuNodes, r.Launches)
	}
	if len(r.Unschedulable) != 1 || !strings.HasPrefix(r.Unschedulable[0].Pod.Name, "train-") ||
		!strings.Contains(r.Unschedulable[0].Reasons["p"], "limits.nvidia.com/gpu") {
		t.Fatalf("unschedulable %+v, want one GPU pod held back by limits.nvidia.com/gpu", r.Unschedulable)
	}
	placed := 0
	for _, l := range r.Launches {
		for _, p := range l.Pods {
			if strings.HasPrefix(p.Name, "web-") {
				placed++
			}
		}
	}
	if placed != 2 {
		t.Fatalf("%d of the 2 pods without GPUs were placed, want both: a type without GPUs counts none", placed)
	}

	// No GPU left: no GPU pod gets a node at all.
	pool.Left = map[corev1.ResourceName]int64{gpu: 0}
	r = solve(t, Input{Pods: pods(1, "train", "6", "1Gi", askingGPUs(1)), Pools: []Pool{pool}})
	if len(r.Launches) != 0 || len(r.Unschedulable) != 1 {
		t.Fatalf("with no GPU left: %+v, want the pod unschedulable", r)
	}
}

// Every offering is linux: a pool that requires kubernetes.io/os In [linux] launches as
// before, and one that requires windows has no offering for any pod.
func TestTheOSRequirementOfAPool(t *testing.T) {
	for _, c := range []struct {
		os       string
		launches int
	}{{"linux", 1}, {"windows", 0}} {
		types := smallCatalog()
		requirement := []corev1.NodeSelectorRequirement{{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{c.os}}}
		var allowed []*cloudprovider.InstanceType
		for _, it := range types {
			narrowed := *it
			narrowed.Offerings = nil
			for _, o := range it.Offerings {
				if ok, err := cloudprovider.Satisfies(it, o, requirement); err != nil {
					t.Fatal(err)
				} else if ok {
					narrowed.Offerings = append(narrowed.Offerings, o)
				}
			}
			if len(narrowed.Offerings) > 0 {
				allowed = append(allowed, &narrowed)
			}
		}
		pool := poolOf("p", allowed)
		pool.Pool.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{c.os}}}
		r := solve(t, Input{Pods: pods(1, "p", "1", "1Gi", selecting(corev1.LabelOSStable, "linux")), Pools: []Pool{pool}})
		if len(r.Launches) != c.launches {
			t.Errorf("kubernetes.io/os In [%s]: %d launches, want %d: %+v", c.os, len(r.Launches), c.launches, r)
		}
	}
}

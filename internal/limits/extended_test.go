package limits

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// gpuLimit is a pool limited to four GPUs and nothing else.
func gpuLimit(gpus int64) v1beta1.Limits {
	return v1beta1.Limits{fakecloud.ResourceGPU: *resource.NewQuantity(gpus, resource.DecimalSI)}
}

// withGPUs is a node of the given CPUs with n GPUs in its capacity, as the NVIDIA device
// plugin reports them.
func withGPUs(cpu string, n int64) corev1.ResourceList {
	capacity := size(cpu, "16Gi")
	capacity[fakecloud.ResourceGPU] = *resource.NewQuantity(n, resource.DecimalSI)
	return capacity
}

// A limit on nvidia.com/gpu counts each claim's GPUs: three one-GPU nodes running leave
// one GPU of four, and a node without GPUs takes none of it.
func TestAGPULimitCountsTheClaimsGPUs(t *testing.T) {
	claims := []*v1beta1.NodeClaim{
		claim("a", v1beta1.PhaseRunning, withGPUs("4", 1)),
		claim("b", v1beta1.PhaseRunning, withGPUs("4", 1)),
		claim("c", v1beta1.PhaseStandby, withGPUs("8", 1)),
		claim("cpu-only", v1beta1.PhaseRunning, size("16", "64Gi")),
	}
	left := Remaining(gpuLimit(4), nil, claims, nil)
	if got := left.Resources[fakecloud.ResourceGPU]; got != 1 {
		t.Fatalf("%d GPUs left, want 1 (4 less 3 claims of one GPU)", got)
	}
	if n, why := left.Fit(withGPUs("4", 1)); n != 1 || why != "limits.nvidia.com/gpu (4)" {
		t.Fatalf("Fit(one-GPU node) = %d (%q), want 1 by limits.nvidia.com/gpu (4)", n, why)
	}
	if n, why := left.Fit(withGPUs("4", 2)); n != 0 || why == "" {
		t.Fatalf("Fit(two-GPU node) = %d (%q), want 0 with the limit named", n, why)
	}
	// An instance type without the resource counts 0 of it: the GPU limit does not bind.
	if n, why := left.Fit(size("4", "16Gi")); n <= 1<<30 || why != "" {
		t.Fatalf("Fit(node without GPUs) = %d (%q), want unlimited", n, why)
	}
	left.Take(withGPUs("4", 1))
	if n, _ := left.Fit(withGPUs("4", 1)); n != 0 {
		t.Fatalf("after taking the last GPU, %d more one-GPU claims fit", n)
	}
	if got := Used(claims, nil).Resources[fakecloud.ResourceGPU]; got != 3 {
		t.Fatalf("Used counts %d GPUs, want 3", got)
	}
}

// A claim not launched yet counts by the cheapest instance type its requirements allow,
// GPUs included: with the fake cloud's catalogue, a claim asking for a GPU instance is
// estimated at the cheapest GPU type's one GPU, and a claim that may be any type at the
// cheapest type's none.
func TestAGPULimitEstimatesUnlaunchedClaimsFromTheCatalog(t *testing.T) {
	catalog := fakecloud.DefaultCatalog()
	var gpuTypes []string
	for _, it := range catalog {
		if q, ok := it.Capacity[fakecloud.ResourceGPU]; ok && !q.IsZero() {
			gpuTypes = append(gpuTypes, it.Name)
		}
	}
	if len(gpuTypes) == 0 {
		t.Fatal("the fake catalogue has no GPU instance type")
	}
	gpu := claim("gpu", v1beta1.PhaseLaunching, nil)
	gpu.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: gpuTypes}}
	anyType := claim("any", v1beta1.PhaseLaunching, nil)
	left := Remaining(gpuLimit(4), nil, []*v1beta1.NodeClaim{gpu, gpu.DeepCopy(), anyType}, Cheapest(catalog))
	if got := left.Resources[fakecloud.ResourceGPU]; got != 2 {
		t.Fatalf("%d GPUs left, want 2: two launching GPU claims of one GPU each, and one claim of no GPU", got)
	}
}

// Limits on several resources bind together: the first one to run out names the reason.
func TestTheFirstLimitToRunOutBinds(t *testing.T) {
	l := v1beta1.Limits{corev1.ResourceCPU: resource.MustParse("64"), fakecloud.ResourceGPU: resource.MustParse("2"), v1beta1.LimitNodes: resource.MustParse("10")}
	left := Remaining(l, l.Nodes(), nil, nil)
	if n, why := left.Fit(withGPUs("8", 1)); n != 2 || why != "limits.nvidia.com/gpu (2)" {
		t.Fatalf("Fit = %d (%q), want 2 by the GPU limit", n, why)
	}
	if n, why := left.Fit(size("16", "64Gi")); n != 4 || why != "limits.cpu (64)" {
		t.Fatalf("Fit = %d (%q), want 4 by the cpu limit", n, why)
	}
}

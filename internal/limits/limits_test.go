package limits

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

func size(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

func claim(name string, phase v1beta1.NodeClaimPhase, capacity corev1.ResourceList) *v1beta1.NodeClaim {
	return &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1beta1.NodeClaimStatus{Phase: phase, Capacity: capacity}}
}

func limitsOf(nodes int32, cpu, memory string) v1beta1.Limits {
	l := v1beta1.Limits{v1beta1.LimitNodes: *resource.NewQuantity(int64(nodes), resource.DecimalSI)}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		l[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return l
}

// Every claim not being deleted counts, running ones included, by its capacity once
// known: two running 4-CPU nodes use up limits of 2 nodes and 8 CPUs.
func TestRunningClaimsCountAgainstTheLimits(t *testing.T) {
	l := limitsOf(2, "8", "")
	claims := []*v1beta1.NodeClaim{claim("a", v1beta1.PhaseRunning, size("4", "16Gi")), claim("b", v1beta1.PhaseRunning, size("4", "16Gi"))}
	left := Remaining(l, l.Nodes(), claims, nil)
	if left.Nodes != 0 || left.Resources[corev1.ResourceCPU] != 0 {
		t.Fatalf("left %d nodes and %d mCPU, want none", left.Nodes, left.Resources[corev1.ResourceCPU])
	}
	if n, why := left.Fit(size("4", "16Gi")); n != 0 || why == "" {
		t.Fatalf("Fit = %d (%q), want 0 with the limit named", n, why)
	}
}

// Claims being deleted do not count; claims not launched yet count by their estimate.
func TestDeletedClaimsAreFreeAndUnlaunchedOnesEstimated(t *testing.T) {
	l := limitsOf(10, "16", "64Gi")
	deleting := claim("gone", v1beta1.PhaseTerminating, size("8", "32Gi"))
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	launching := claim("new", v1beta1.PhaseLaunching, nil)
	estimated := 0
	left := Remaining(l, l.Nodes(), []*v1beta1.NodeClaim{deleting, launching}, func(*v1beta1.NodeClaim) corev1.ResourceList {
		estimated++
		return size("2", "8Gi")
	})
	if left.Nodes != 9 || left.Resources[corev1.ResourceCPU] != 14000 || left.Resources[corev1.ResourceMemory] != 56<<30 || estimated != 1 {
		t.Fatalf("left %d nodes, %d mCPU, %d bytes (estimated %d): want 9, 14000, 56Gi, 1", left.Nodes, left.Resources[corev1.ResourceCPU], left.Resources[corev1.ResourceMemory], estimated)
	}
	if n, why := left.Fit(size("4", "8Gi")); n != 3 || why != "limits.cpu (16)" {
		t.Fatalf("Fit = %d (%q), want 3 by limits.cpu", n, why)
	}
}

// A window's cap replaces limits.nodes and is named as such; no cap is unlimited.
func TestTheNodeCapInForce(t *testing.T) {
	window := int32(1)
	left := Remaining(limitsOf(5, "", ""), &window, []*v1beta1.NodeClaim{claim("a", v1beta1.PhaseStandby, nil)}, nil)
	if n, why := left.Fit(nil); n != 0 || why != "the node cap (1)" {
		t.Fatalf("Fit = %d (%q), want 0 by the window's cap", n, why)
	}
	if n, _ := Remaining(nil, nil, nil, nil).Fit(size("1", "1Gi")); n <= 1<<30 {
		t.Fatalf("no limits must not cap, got %d", n)
	}
}

func TestTakeSpendsWhatIsLeft(t *testing.T) {
	l := limitsOf(3, "8", "")
	left := Remaining(l, l.Nodes(), nil, nil)
	left.Take(size("4", "8Gi"))
	if n, _ := left.Fit(size("4", "8Gi")); n != 1 {
		t.Fatalf("after one 4-CPU claim, %d more fit under 8 CPUs, want 1", n)
	}
}

// The estimate of a claim not launched yet is the cheapest type its requirements allow.
func TestCheapestEstimatesByTheClaimsRequirements(t *testing.T) {
	offer := func(price float64) []cloudprovider.Offering {
		return []cloudprovider.Offering{{Zone: "z", CapacityType: v1beta1.CapacityTypeOnDemand, PricePerHour: price, Available: true}}
	}
	types := []*cloudprovider.InstanceType{
		{Name: "small", Architecture: "amd64", Capacity: size("2", "4Gi"), Offerings: offer(1)},
		{Name: "large", Architecture: "amd64", Capacity: size("8", "32Gi"), Offerings: offer(4)},
	}
	estimate := Cheapest(types)
	any := claim("any", v1beta1.PhaseLaunching, nil)
	large := claim("large", v1beta1.PhaseLaunching, nil)
	large.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"large"}}}
	none := claim("none", v1beta1.PhaseLaunching, nil)
	none.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"gone"}}}
	none.Spec.Resources.Requests = size("1", "1Gi")
	for _, c := range []struct {
		claim *v1beta1.NodeClaim
		cpu   int64
	}{{any, 2000}, {large, 8000}, {none, 1000}} {
		if got := estimate(c.claim); got.Cpu().MilliValue() != c.cpu {
			t.Errorf("claim %s estimated at %d mCPU, want %d", c.claim.Name, got.Cpu().MilliValue(), c.cpu)
		}
	}
}

// What the pool uses is the count Remaining subtracts: claims being deleted are free,
// claims not launched count by the estimate, others by their capacity.
func TestUsedIsTheCountTheLimitsSubtract(t *testing.T) {
	deleting := claim("gone", v1beta1.PhaseTerminating, size("8", "32Gi"))
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	claims := []*v1beta1.NodeClaim{deleting, claim("run", v1beta1.PhaseRunning, size("4", "16Gi")), claim("new", v1beta1.PhaseLaunching, nil)}
	estimate := func(*v1beta1.NodeClaim) corev1.ResourceList { return size("2", "8Gi") }
	if got, want := Used(claims, estimate), (Usage{Nodes: 2, Resources: map[corev1.ResourceName]int64{corev1.ResourceCPU: 6000, corev1.ResourceMemory: 24 << 30}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("used %+v, want %+v", got, want)
	}
	if got, want := Used(claims, nil), (Usage{Nodes: 2, Resources: map[corev1.ResourceName]int64{corev1.ResourceCPU: 4000, corev1.ResourceMemory: 16 << 30}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("without an estimate: used %+v, want %+v", got, want)
	}
	l := limitsOf(10, "16", "64Gi")
	left := Remaining(l, l.Nodes(), claims, estimate)
	if left.Nodes != 8 || left.Resources[corev1.ResourceCPU] != 16000-6000 || left.Resources[corev1.ResourceMemory] != (64-24)<<30 {
		t.Fatalf("Remaining disagrees with Used: %d nodes, %d mCPU, %d bytes left", left.Nodes, left.Resources[corev1.ResourceCPU], left.Resources[corev1.ResourceMemory])
	}
}

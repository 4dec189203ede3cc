package scheduling

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// optimalBins is the fewest bins of capacity that hold sizes, by exhaustive search.
func optimalBins(sizes []int64, capacity int64) int {
	best := len(sizes)
	var loads []int64
	var search func(i int)
	search = func(i int) {
		if len(loads) >= best {
			return
		}
		if i == len(sizes) {
			best = len(loads)
			return
		}
		seen := map[int64]bool{}
		for b := range loads {
			if loads[b]+sizes[i] <= capacity && !seen[loads[b]] {
				seen[loads[b]] = true
				loads[b] += sizes[i]
				search(i + 1)
				loads[b] -= sizes[i]
			}
		}
		loads = append(loads, sizes[i])
		search(i + 1)
		loads = loads[:len(loads)-1]
	}
	search(0)
	return best
}

// On small random inputs with one instance type, the simulation never uses more nodes
// than the optimum plus one.
func TestPackingIsNearOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	catalog := []*cloudprovider.InstanceType{instanceTypeOf("four", "4", "64Gi", 0.2)}
	millis := []int64{500, 1000, 1500, 2000, 2500, 3000}
	for round := range 300 {
		n := 1 + rng.IntN(8)
		var in Input
		var sizes []int64
		for i := range n {
			m := millis[rng.IntN(len(millis))]
			sizes = append(sizes, m)
			in.Pods = append(in.Pods, podOf(fmt.Sprintf("p%d", i), resource.NewMilliQuantity(m, resource.DecimalSI).String(), "1Mi"))
		}
		in.Pools = []Pool{poolOf("p", catalog)}
		r := solve(t, in)
		// The pod count is a resource too: capacity counts it, so compare in millicores.
		if opt := optimalBins(sizes, 4000); len(r.Launches) > opt+1 {
			t.Fatalf("round %d: sizes %v took %d nodes, the optimum is %d", round, sizes, len(r.Launches), opt)
		}
	}
}

// cheapestPartition is the lowest cost of placing pods on new nodes of types, by
// exhaustive search over the ways to group them: a group costs the cheapest available
// offering whose type's allocatable holds it and whose labels every pod's node selector
// matches.
func cheapestPartition(pods []*corev1.Pod, types []*cloudprovider.InstanceType) float64 {
	groupCost := func(group []*corev1.Pod) float64 {
		best := math.Inf(1)
		for _, it := range types {
			if ok, _ := quota.LessThanOrEqual(requestsOf(group), it.Allocatable()); !ok {
				continue
			}
			for _, o := range it.Offerings {
				selected := func(pod *corev1.Pod) bool {
					return labels.SelectorFromSet(pod.Spec.NodeSelector).Matches(labels.Set(it.Labels(o)))
				}
				if o.Available && o.PricePerHour < best && !slices.ContainsFunc(group, func(pod *corev1.Pod) bool { return !selected(pod) }) {
					best = o.PricePerHour
				}
			}
		}
		return best
	}
	best := math.Inf(1)
	var groups [][]*corev1.Pod
	var search func(i int, cost float64)
	search = func(i int, cost float64) {
		if cost >= best {
			return
		}
		if i == len(pods) {
			best = cost
			return
		}
		for g := range groups {
			before := groupCost(groups[g])
			groups[g] = append(groups[g], pods[i])
			search(i+1, cost-before+groupCost(groups[g]))
			groups[g] = groups[g][:len(groups[g])-1]
		}
		groups = append(groups, []*corev1.Pod{pods[i]})
		search(i+1, cost+groupCost(groups[len(groups)-1]))
		groups = groups[:len(groups)-1]
	}
	search(0, 0)
	return best
}

// maxCostOverOptimum is the most the new capacity of one small input may cost over the
// optimum, and maxMeanCostOverOptimum the most on average: first-fit-decreasing is not
// optimal, and on a few pods one pod too many for a node costs a whole node.
const (
	maxCostOverOptimum     = 1.5
	maxMeanCostOverOptimum = 1.1
)

// On small random inputs with instance types of three shapes and two sizes, the new
// capacity costs little more than the cheapest grouping found by exhaustive search.
func TestCostIsNearOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	catalog := []*cloudprovider.InstanceType{
		instanceTypeOf("c.large", "2", "4Gi", 0.085), instanceTypeOf("c.xlarge", "4", "8Gi", 0.17),
		instanceTypeOf("m.large", "2", "8Gi", 0.096), instanceTypeOf("m.xlarge", "4", "16Gi", 0.192),
		instanceTypeOf("r.large", "2", "16Gi", 0.126), instanceTypeOf("r.xlarge", "4", "32Gi", 0.252),
	}
	cpus := []string{"250m", "500m", "1", "1500m", "2"}
	memories := []string{"512Mi", "1Gi", "2Gi", "4Gi", "6Gi", "8Gi"}
	worst, sum := 0.0, 0.0
	const rounds = 200
	for round := range rounds {
		var in Input
		for i := range 1 + rng.IntN(7) {
			in.Pods = append(in.Pods, podOf(fmt.Sprintf("p%d", i), cpus[rng.IntN(len(cpus))], memories[rng.IntN(len(memories))]))
		}
		in.Pools = []Pool{poolOf("p", catalog)}
		r := solve(t, in)
		optimum := cheapestPartition(in.Pods, catalog)
		if len(r.Unschedulable) > 0 || math.IsInf(optimum, 1) {
			t.Fatalf("round %d: %d unschedulable, optimum %v", round, len(r.Unschedulable), optimum)
		}
		// The bound the benchmarks divide by is a lower bound: no packing beats it.
		if bound := launchCostBound(in, r); bound > optimum*(1+1e-9) {
			t.Fatalf("round %d: the cost bound %.4f is above the optimum %.4f", round, bound, optimum)
		}
		ratio := launchCost(r) / optimum
		worst, sum = math.Max(worst, ratio), sum+ratio
		if ratio > maxCostOverOptimum {
			t.Errorf("round %d: the launches cost %.3f, the optimum %.3f", round, launchCost(r), optimum)
		}
	}
	t.Logf("cost over the optimum: mean %.3f, worst %.3f", sum/rounds, worst)
	if sum/rounds > maxMeanCostOverOptimum {
		t.Errorf("the launches cost %.3f times the optimum on average", sum/rounds)
	}
}

// On small random inputs whose pods select an architecture or a zone, among types of
// both architectures priced differently by zone, the cost bound is never above the
// cheapest grouping found by exhaustive search (on so few pods it is well below: a pod
// alone buys a whole node, the bound a fraction of one). The same
// check fails a bound that overstates what pods take (offerings with half their room).
func TestCostBoundIsBelowTheOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	var catalog []*cloudprovider.InstanceType
	for _, shape := range []struct {
		name, cpu, memory string
		price             float64
	}{{"c.large", "2", "4Gi", 0.085}, {"m.large", "2", "8Gi", 0.096}, {"m.xlarge", "4", "16Gi", 0.192}, {"r.large", "2", "16Gi", 0.126}} {
		for _, arch := range []string{"amd64", "arm64"} {
			it := instanceTypeOf(shape.name+"-"+arch, shape.cpu, shape.memory, shape.price, "zone-a", "zone-b")
			it.Architecture = arch
			for i := range it.Offerings {
				it.Offerings[i].PricePerHour *= 0.7 + 0.6*rng.Float64()
			}
			catalog = append(catalog, it)
		}
	}
	selectors := []map[string]string{nil, nil, {corev1.LabelArchStable: "arm64"}, {corev1.LabelArchStable: "amd64"},
		{corev1.LabelTopologyZone: "zone-a"}, {corev1.LabelArchStable: "amd64", corev1.LabelTopologyZone: "zone-b"}}
	cpus := []string{"250m", "500m", "1", "1500m"}
	memories := []string{"512Mi", "1Gi", "2Gi", "4Gi", "6Gi"}
	const rounds = 150
	var sum float64
	overstated := 0
	for round := range rounds {
		var in Input
		for i := range 1 + rng.IntN(6) {
			sel := selectors[rng.IntN(len(selectors))]
			in.Pods = append(in.Pods, podOf(fmt.Sprintf("p%d", i), cpus[rng.IntN(len(cpus))], memories[rng.IntN(len(memories))],
				func(p *corev1.Pod) { p.Spec.NodeSelector = sel }))
		}
		in.Pools = []Pool{poolOf("p", catalog)}
		r := solve(t, in)
		optimum := cheapestPartition(in.Pods, catalog)
		bound := launchCostBound(in, r)
		if bound > optimum*(1+1e-9) || bound <= 0 {
			t.Fatalf("round %d: the cost bound %.4f is not within (0, the optimum %.4f]", round, bound, optimum)
		}
		sum += bound / optimum
		offerings := boundOfferings(in, "")
		for i := range offerings {
			for d := range boundDims {
				offerings[i].allocatable[d] /= 2
			}
		}
		if fractionalBound(offerings, boundClasses(in.Pods, offerings)) > optimum*(1+1e-9) {
			overstated++
		}
	}
	t.Logf("the bound is %.3f of the optimum on average; the planted overstatement exceeds the optimum in %d of %d rounds", sum/rounds, overstated, rounds)
	if overstated == 0 {
		t.Error("a bound that halves every offering's room never exceeded the optimum: the check cannot catch an overstated bound")
	}
}

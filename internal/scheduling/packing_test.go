package scheduling

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

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

package scheduling

import (
	"cmp"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// referenceFFD is first-fit-decreasing written plainly, for the benchmark's kinds of
// pods: it recounts everything for every pod and bin. A new node may grow to the
// largest instance type. It returns the number of nodes it opens.
func referenceFFD(in Input) int {
	type node struct {
		zone string
		used resources
		pods []*corev1.Pod
	}
	var largest resources
	for _, it := range in.Pools[0].InstanceTypes {
		a := fromList(it.Allocatable())
		largest.max(&a)
	}
	zones := []string{"zone-a", "zone-b", "zone-c"}
	ordered := slices.Clone(in.Pods)
	slices.SortStableFunc(ordered, func(a, b *corev1.Pod) int {
		ra, rb := podRequests(a), podRequests(b)
		return cmp.Or(cmp.Compare(rb.cpu, ra.cpu), cmp.Compare(rb.memory, ra.memory), cmp.Compare(a.Name, b.Name))
	})
	var nodes []*node
	app := func(p *corev1.Pod) string { return p.Labels["app"] }
	inZone := func(a, zone string) int {
		n := 0
		for _, nd := range nodes {
			if nd.zone == zone {
				for _, q := range nd.pods {
					if app(q) == a {
						n++
					}
				}
			}
		}
		return n
	}
	onNode := func(nd *node, a string) int {
		n := 0
		for _, q := range nd.pods {
			if app(q) == a {
				n++
			}
		}
		return n
	}
	// zoneFor returns the zone a pod may take on nd ("" when it does not care), or false.
	zoneFor := func(p *corev1.Pod, nd *node) (string, bool) {
		switch app(p) {
		case "host-spread", "host-anti":
			return nd.zone, onNode(nd, app(p)) == 0
		case "zone-spread":
			lo := inZone(app(p), zones[0])
			for _, z := range zones {
				lo = min(lo, inZone(app(p), z))
			}
			var best string
			for _, z := range zones {
				if (nd.zone == "" || nd.zone == z) && inZone(app(p), z)+1-lo <= 1 && (best == "" || inZone(app(p), z) < inZone(app(p), best)) {
					best = z
				}
			}
			return best, best != ""
		case "zone-affinity":
			for _, z := range zones {
				if inZone(app(p), z) > 0 {
					return z, nd.zone == "" || nd.zone == z
				}
			}
			if nd.zone != "" {
				return nd.zone, true
			}
			return zones[0], true
		}
		return nd.zone, true
	}
	fitsOn := func(p *corev1.Pod, nd *node) bool {
		r := podRequests(p)
		total := nd.used.plus(&r)
		if !total.fits(&largest) {
			return false
		}
		zone, ok := zoneFor(p, nd)
		if ok {
			nd.zone, nd.used = zone, total
			nd.pods = append(nd.pods, p)
		}
		return ok
	}
	for _, p := range ordered {
		placed := false
		for _, nd := range nodes {
			if placed = fitsOn(p, nd); placed {
				break
			}
		}
		if !placed {
			nd := &node{}
			if !fitsOn(p, nd) {
				return -1
			}
			nodes = append(nodes, nd)
		}
	}
	return len(nodes)
}

// The simulation opens no more nodes than plain first-fit-decreasing on the benchmark's
// input.
func TestNoMoreNodesThanFirstFitDecreasing(t *testing.T) {
	for _, n := range []int{100, 1000, 5000} {
		in := benchmarkInput(n)
		r := solve(t, in)
		ref := referenceFFD(in)
		t.Logf("%d pods: %d nodes, plain first-fit-decreasing %d", n, len(r.Launches), ref)
		if ref < 0 || len(r.Launches) > ref {
			t.Fatalf("%d pods: %d nodes, more than first-fit-decreasing's %d", n, len(r.Launches), ref)
		}
	}
}

package scheduling

import (
	"testing"
)

// The scheduling benchmarks run the realistic mix (mix_test.go) three ways: "topology"
// (every pod kind, a fresh cluster), "plain" (the same pods without topology spread or
// pod affinity: the packing-quality target's case) and "cluster" (every pod kind on a
// cluster with nodes, claims in flight, standby claims and DaemonSets). Each reports,
// beside pods/sec, the new nodes and the cost of the new capacity over its lower bound,
// and verifies its result with the independent verifier outside the timer.
func benchmarkScheduling(b *testing.B, pods int) {
	for _, c := range []struct {
		name string
		o    mixOptions
	}{
		{"topology", mixOptions{pods: pods, topology: true}},
		{"plain", mixOptions{pods: pods}},
		{"cluster", mixOptions{pods: pods, topology: true, cluster: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			in := mixInput(1, c.o)
			var r Result
			for b.Loop() {
				r = Solve(in)
			}
			b.ReportMetric(float64(pods)*float64(b.N)/b.Elapsed().Seconds(), "pods/sec")
			reportQuality(b, in, r)
		})
	}
}

// reportQuality verifies a result and reports its new nodes and cost ratio.
func reportQuality(b *testing.B, in Input, r Result) {
	b.Helper()
	if found := violations(b, in, r); len(found) > 0 {
		b.Fatalf("%d violations, the first: %s", len(found), found[0])
	}
	if len(r.Unschedulable) > 0 {
		b.Fatalf("%d pods unschedulable, the first %s: %v", len(r.Unschedulable), r.Unschedulable[0].Pod.Name, r.Unschedulable[0].Reasons)
	}
	cost := launchCost(r)
	b.ReportMetric(float64(len(r.Launches)), "new-nodes")
	b.ReportMetric(float64(len(r.Starts)), "starts")
	b.ReportMetric(cost, "$/h")
	if bound := launchCostBound(in, r); bound > 0 {
		b.ReportMetric(cost/bound, "cost/bound")
	}
}

func BenchmarkScheduling1000(b *testing.B)  { benchmarkScheduling(b, 1000) }
func BenchmarkScheduling5000(b *testing.B)  { benchmarkScheduling(b, 5000) }
func BenchmarkScheduling20000(b *testing.B) { benchmarkScheduling(b, 20000) }

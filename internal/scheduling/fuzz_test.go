package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/scheduling/verifier"
)

// fuzzOptions reads a fuzzer's numbers as generator options: up to 400 pods, with or
// without topology, on a fresh or a busy cluster, with or without instance labels and
// minValues floors, with or without volumes.
func fuzzOptions(pods uint16, options uint8) mixOptions {
	return mixOptions{pods: 1 + int(pods%400), topology: options&1 != 0, cluster: options&2 != 0, labels: options&4 != 0, volumes: options&8 != 0}
}

// fuzzInput is the generated input of a seed and options, with the storage objects its
// pods' volumes name (none without o.volumes).
func fuzzInput(t testing.TB, seed uint64, o mixOptions) (Input, verifier.Storage) {
	in := mixInput(seed, o)
	if !o.volumes {
		return in, verifier.Storage{}
	}
	f := mixVolumes(seed, &in)
	f.fill(t, &in)
	return in, f.verifierStorage()
}

// Whatever the input the generator makes, the verifier finds nothing wrong with the
// simulation's result. `make fuzz` runs it with the fuzzer; `make test` runs the seeds.
func FuzzSolve(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, uint16(20+seed*47), uint8(seed))
	}
	f.Fuzz(func(t *testing.T, seed uint64, pods uint16, options uint8) {
		in, storage := fuzzInput(t, seed, fuzzOptions(pods, options))
		verifyWithStorage(t, in, Solve(in), storage)
	})
}

// A few hundred random inputs of every kind hold together, and a pod the simulation
// leaves unschedulable is one no node of its result would take either: kube-scheduler
// would leave it pending on that cluster too. (A pod whose required hostname affinity
// selects pods on nodes with no room left is such a pod: a new node holds none of them.)
func TestRandomInputsHoldTogether(t *testing.T) {
	unschedulable, pods, kinds := 0, 0, map[string]int{}
	for seed := range uint64(200) {
		in, storage := fuzzInput(t, 1000+seed, fuzzOptions(uint16(seed*97), uint8(seed)))
		r := Solve(in)
		if found := violationsWithStorage(t, in, r, storage); len(found) > 0 {
			t.Fatalf("seed %d: %d violations, the first: %s", 1000+seed, len(found), found[0])
		}
		c, _ := verifierCase(in, r, 0)
		c.Storage = storage
		left := make([]*corev1.Pod, len(r.Unschedulable))
		for i, u := range r.Unschedulable {
			left[i] = u.Pod
			kinds[u.Pod.Annotations[mixKindAnnotation]]++
		}
		for i, nodes := range verifier.Admitting(c, left) {
			if len(nodes) > 0 {
				t.Errorf("seed %d: %s is unschedulable, but %v would take it", 1000+seed, left[i].Name, nodes)
			}
		}
		unschedulable, pods = unschedulable+len(left), pods+len(in.Pods)
	}
	t.Logf("%d of %d pods unschedulable, by kind: %v", unschedulable, pods, kinds)
}

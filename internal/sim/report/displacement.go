package report

import (
	"sort"
	"time"
)

// Interruptions measures the scenario's interruptions: for each pod that was on an
// interrupted instance's Node at the notice, how long until a pod of its workload ran
// elsewhere, and whether it was killed with its instance.
type Interruptions struct {
	// Instances given notice.
	Instances int `json:"instances"`
	Recovery
	// PodsKilled are the displaced pods still bound to their Node, and not being
	// deleted, when the instance was taken away.
	PodsKilled int `json:"podsKilled"`
}

// Repairs measures the Nodes the scenario made unhealthy in the same terms, from the
// moment each turned unhealthy.
type Repairs struct {
	// Nodes made unhealthy.
	Nodes int `json:"nodes"`
	Recovery
}

// Recovery is how displaced pods were replaced.
type Recovery struct {
	// PodsDisplaced were on the Nodes at the notice; PodsReplaced of them have a
	// replacement Running and Ready; the others are still waiting.
	PodsDisplaced int `json:"podsDisplaced"`
	PodsReplaced  int `json:"podsReplaced"`
	// RecoverySeconds runs from the notice to the replacement Running and Ready, in
	// scenario seconds.
	RecoverySeconds Latency `json:"recoverySeconds"`
	// Replacements counts the replacements by how their Node came: started from standby
	// after the notice, launched after it (cold), or there before it.
	Replacements ReplacementPaths `json:"replacements"`
	// Seconds are the recovery times, for the conditions; out of the JSON.
	Seconds []float64 `json:"-"`
}

// ReplacementPaths counts replacements by the path of their Node.
type ReplacementPaths struct {
	Standby  int `json:"standby"`
	Cold     int `json:"cold"`
	Existing int `json:"existing"`
}

// Displacement is one Node whose pods had to move: given notice of its instance's end,
// or turned unhealthy.
type Displacement struct {
	// At is the notice, or when the Node turned unhealthy.
	At time.Time
	// EndsAt is when the instance is taken away; zero when nothing takes it away (a
	// rebalance recommendation, an unhealthy Node).
	EndsAt time.Time
	Node   string
	Pods   []DisplacedPod
}

// DisplacedPod is a workload pod on a displaced Node at the notice.
type DisplacedPod struct {
	// Owner is the pod's workload, namespace/name.
	Owner string
	// Deleted is when its deletion was first seen; zero when it never was.
	Deleted time.Time
}

// Arrival is a workload pod that turned Running and Ready, on the Node it did.
type Arrival struct {
	Owner string
	Node  string
	Ready time.Time
	// NodeStarted is the last start call of the Node's instance before the pod turned
	// Ready, zero when none; NodeRegistered is when the Node first registered.
	NodeStarted, NodeRegistered time.Time
}

// MatchReplacements measures how the displaced pods were replaced, as of now. For each
// displacement, in the order of their times, the k-th displaced pod of a workload is
// matched with the k-th pod of that workload to turn Running and Ready on another Node
// after the notice, among the pods no earlier displacement took. Recovery times are in
// scenario seconds: wall time multiplied by scale.
//
// It also counts the killed pods: displaced pods of a displacement whose instance was
// taken away by now that were not deleted before it was.
func MatchReplacements(displacements []Displacement, arrivals []Arrival, scale float64, now time.Time) (Recovery, int) {
	var (
		rec    Recovery
		killed int
	)
	order := make([]int, len(displacements))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return displacements[order[a]].At.Before(displacements[order[b]].At) })
	sorted := make([]int, len(arrivals))
	for i := range sorted {
		sorted[i] = i
	}
	sort.SliceStable(sorted, func(a, b int) bool { return arrivals[sorted[a]].Ready.Before(arrivals[sorted[b]].Ready) })
	taken := make([]bool, len(arrivals))

	for _, di := range order {
		d := displacements[di]
		rec.PodsDisplaced += len(d.Pods)
		wanted := map[string]int{}
		for _, pod := range d.Pods {
			wanted[pod.Owner]++
			if !d.EndsAt.IsZero() && !now.Before(d.EndsAt) && (pod.Deleted.IsZero() || pod.Deleted.After(d.EndsAt)) {
				killed++
			}
		}
		for _, ai := range sorted {
			a := arrivals[ai]
			if taken[ai] || wanted[a.Owner] == 0 || a.Node == d.Node || !a.Ready.After(d.At) || a.Ready.After(now) {
				continue
			}
			taken[ai] = true
			wanted[a.Owner]--
			seconds := a.Ready.Sub(d.At).Seconds() * scale
			rec.Seconds = append(rec.Seconds, seconds)
			rec.PodsReplaced++
			switch {
			case !a.NodeStarted.IsZero() && !a.NodeStarted.Before(d.At):
				rec.Replacements.Standby++
			case !a.NodeRegistered.Before(d.At):
				rec.Replacements.Cold++
			default:
				rec.Replacements.Existing++
			}
		}
	}
	rec.RecoverySeconds = Percentiles(rec.Seconds)
	return rec, killed
}

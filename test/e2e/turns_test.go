package e2e

import (
	"slices"
	"sync"
	"testing"
)

// turnOrder names the scenarios' tests in the order they take their turns: longest
// first, as measured in make test (test/e2e's go test -json, four at once, 2 cores), so
// that the longest are not left to start last and run on alone. With go test's own
// release order, which is close to random, the package took 574-582 s; longest first,
// 539-558 s. One exception: TestSpotInterruption's "back within 30 s" is the tightest
// latency any scenario expects, and CPU contention shows in it. Started at once with
// the other longest, while the integration packages load the cores too, it failed with
// a p99 of 31 s; it now comes after the first wave, at about 250 s, when those packages
// are ending, where go test's own order had put it (284 s) in the runs that passed. The
// package's time stays about the same. A test not named here goes first, as its length
// is not known. Keep the list in order when a scenario's time changes much.
var turnOrder = []string{
	"TestScale",                     // 258 s
	"TestLearnedPeak",               // 252 s
	"TestNodeRepair",                // 176 s
	"TestWarmupFailure",             // 145 s
	"TestSpotInterruptionCold",      // 139 s
	"TestClusterAPIQuickstart",      // 118 s
	"TestSpotInterruption",          // 228 s, see above
	"TestClusterAPIStandby",         // 112 s
	"TestGiveBackOnAWS",             // 97 s
	"TestClusterAPIWindows",         // 92 s
	"TestQuickstartOnAWS",           // 82 s
	"TestQuickstart",                // 77 s
	"TestCapacityBufferStandby",     // 65 s
	"TestPDBGuard",                  // 60 s
	"TestCapacityBuffer",            // 58 s
	"TestLimits",                    // 44 s
	"TestZonalVolume",               // 35 s
	"TestKarpenterMigratedOnAWS",    // 31 s
	"TestKubeletConfigurationOnAWS", // 28 s
}

// turns lets at most a number of scenarios run at once, each in its turn by
// turnOrder. Every test joins the line before it calls t.Parallel, so when go test
// releases the parallel tests (all of them: TestMain raises -test.parallel) the line
// holds every test of the run, and the order does not depend on which goroutine wakes
// first.
type turns struct {
	mu      sync.Mutex
	changed sync.Cond
	free    int
	line    []string
}

func newTurns(atOnce int) *turns {
	q := &turns{free: atOnce}
	q.changed.L = &q.mu
	return q
}

// scenarioTurns is the package's line; TestMain sizes it.
var scenarioTurns *turns

// runInTurn makes t a parallel test that starts in its turn and gives its place up when
// it ends.
func runInTurn(t *testing.T) {
	scenarioTurns.join(t.Name())
	t.Parallel()
	scenarioTurns.wait(t.Name())
	t.Cleanup(scenarioTurns.leave)
}

func (q *turns) join(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.line = append(q.line, name)
	slices.SortStableFunc(q.line, func(a, b string) int { return rank(a) - rank(b) })
}

func (q *turns) wait(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.free == 0 || q.line[0] != name {
		q.changed.Wait()
	}
	q.line = q.line[1:]
	q.free--
	// The next in line may start too, if a place is free.
	q.changed.Broadcast()
}

func (q *turns) leave() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free++
	q.changed.Broadcast()
}

// rank is a test's place in turnOrder; a test not named there comes before all.
func rank(name string) int {
	return slices.Index(turnOrder, name)
}

// TestTurnsGoLongestFirst checks the line's order: tests that join in another order,
// one place at a time, start in turnOrder, and one not named there before all.
func TestTurnsGoLongestFirst(t *testing.T) {
	q := newTurns(1)
	joined := []string{"TestLimits", "TestScale", "TestNotListed", "TestQuickstart", "TestLearnedPeak"}
	for _, name := range joined {
		q.join(name)
	}
	var mu sync.Mutex
	var started []string
	var wg sync.WaitGroup
	for _, name := range slices.Backward(joined) {
		wg.Go(func() {
			q.wait(name)
			mu.Lock()
			started = append(started, name)
			mu.Unlock()
			q.leave()
		})
	}
	wg.Wait()
	want := []string{"TestNotListed", "TestScale", "TestLearnedPeak", "TestQuickstart", "TestLimits"}
	if !slices.Equal(started, want) {
		t.Errorf("started %v, want %v", started, want)
	}
}

package disruption_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/test/stack"
)

// rollout follows a pool's claims through the API server's watch, every version in
// order, from the warm pool it starts with: at each change it counts the claims made
// since (fresh) that are not standing by yet, and the claims standing by.
type rollout struct {
	mu     sync.Mutex
	old    map[string]bool
	claims map[string]v1beta1.NodeClaim
	// mostWarming is the most fresh claims seen warming at once, fewestReady the fewest
	// claims seen standing by; trace lists each change, for a failure's message.
	mostWarming, fewestReady int
	trace                    []string
}

// followRollout starts following the pool, whose claims are old (the warm pool before
// the change under test).
func followRollout(f *stack.Fixture, pool string, old []v1beta1.NodeClaim) *rollout {
	f.T.Helper()
	r := &rollout{old: map[string]bool{}, claims: map[string]v1beta1.NodeClaim{}, fewestReady: len(old)}
	for _, c := range old {
		r.old[c.Name] = true
	}
	watcher, err := client.NewWithWatch(f.Env.Config, client.Options{Scheme: f.Env.Scheme})
	if err != nil {
		f.T.Fatal(err)
	}
	// The watch starts where the list ends: every change after it is seen, in order.
	list := &v1beta1.NodeClaimList{}
	if err := watcher.List(f.Ctx, list); err != nil {
		f.T.Fatal(err)
	}
	for _, c := range list.Items {
		if c.Spec.NodePool == pool {
			r.claims[c.Name] = c
		}
	}
	w, err := watcher.Watch(f.Ctx, &v1beta1.NodeClaimList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		f.T.Fatal(err)
	}
	f.T.Cleanup(w.Stop)
	go func() {
		for event := range w.ResultChan() {
			claim, ok := event.Object.(*v1beta1.NodeClaim)
			if !ok || claim.Spec.NodePool != pool {
				continue
			}
			r.mu.Lock()
			if event.Type == watch.Deleted {
				delete(r.claims, claim.Name)
			} else {
				r.claims[claim.Name] = *claim
			}
			r.count()
			r.mu.Unlock()
		}
	}()
	return r
}

// count takes the measures of the claims as they are now; r.mu is held.
func (r *rollout) count() {
	warming, ready := 0, 0
	for _, c := range r.claims {
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		standing := c.Status.Phase == v1beta1.PhaseStandby
		if standing {
			ready++
		}
		if !r.old[c.Name] && !standing {
			warming++
		}
	}
	r.mostWarming = max(r.mostWarming, warming)
	r.fewestReady = min(r.fewestReady, ready)
	r.trace = append(r.trace, fmt.Sprintf("%d warming/%d ready", warming, ready))
}

// replaced reports whether every old claim is gone and n fresh ones stand by.
func (r *rollout) replaced(n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh := 0
	for name, c := range r.claims {
		if r.old[name] {
			return false
		}
		if c.Status.Phase == v1beta1.PhaseStandby && c.DeletionTimestamp.IsZero() {
			fresh++
		}
	}
	return fresh == n
}

// freshSeen is how many claims made since the rollout began were seen.
func (r *rollout) freshSeen() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for name := range r.claims {
		if !r.old[name] {
			n++
		}
	}
	return n
}

func (r *rollout) measures() (mostWarming, fewestReady int, trace string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mostWarming, r.fewestReady, strings.Join(r.trace, ", ")
}

// pacedNotes are the notes of the pool's StandbyReplacementPaced Events, each Event
// counted as often as it was recorded.
func pacedNotes(f *stack.Fixture, pool string) []string {
	f.T.Helper()
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events); err != nil {
		f.T.Fatal(err)
	}
	var notes []string
	for _, e := range events.Items {
		if e.Regarding.Name != pool || e.Reason != nodepool.ReasonStandbyReplacementPaced {
			continue
		}
		notes = append(notes, e.Note)
		if e.Series != nil {
			for range e.Series.Count - 1 {
				notes = append(notes, e.Note)
			}
		}
	}
	return notes
}

// A new template drifts a warm pool of 6 under a budget of 33% for Drifted: 2 of 6 (a
// percentage of the target, rounded up). The pool never has more than 2 fresh claims
// warming at once, never fewer than 6 standing by, replaces all 6, and says once that
// the budget paces it.
func TestDriftedStandbyNodesAreReplacedAsTheBudgetAllows(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("paced", 6, func(p *v1beta1.NodePool) {
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "33%", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionDrifted}}}
	})
	old := f.WaitForPhase("paced", 6, v1beta1.PhaseStandby)
	r := followRollout(f, "paced", old)
	changeTemplate(f, "paced")

	f.Eventually("6 fresh standby nodes replace the 6 drifted ones", func() bool { return r.replaced(6) })
	mostWarming, fewestReady, trace := r.measures()
	t.Logf("claims at each change: %s", trace)
	if mostWarming != 2 {
		t.Fatalf("%d fresh claims warmed at once, want 2 (33%% of 6, rounded up): %s", mostWarming, trace)
	}
	if fewestReady < 6 {
		t.Fatalf("the warm pool fell to %d ready standby nodes while drifted ones were replaced: %s", fewestReady, trace)
	}
	for _, c := range f.Claims("paced") {
		if c.Labels["example.com/release"] != "2" {
			t.Fatalf("claim %s was not made from the new template: %v", c.Name, c.Labels)
		}
	}
	f.Eventually("the pool says its budget paces the replacement", func() bool { return len(pacedNotes(f, "paced")) > 0 })
	if notes := pacedNotes(f, "paced"); len(notes) != 1 || !strings.Contains(notes[0], "2 at a time") || !strings.Contains(notes[0], "Drifted") {
		t.Fatalf("StandbyReplacementPaced Events %q, want one saying 2 at a time for Drifted", notes)
	}
	f.CheckInvariants()
}

// A budget of 0 for Drifted freezes the rollout of a warm pool: no fresh claim is made
// and the pool says why. Raising it to 1 lets the rollout go on, one at a time.
func TestABudgetOfZeroForDriftFreezesTheWarmPoolsRollout(t *testing.T) {
	f := stack.NewFixture(t, nil)
	pool := f.Pool("frozen", 3, func(p *v1beta1.NodePool) {
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionDrifted}}}
	})
	old := f.WaitForPhase("frozen", 3, v1beta1.PhaseStandby)
	r := followRollout(f, "frozen", old)
	changeTemplate(f, "frozen")

	f.Eventually("the pool says its replacement is stopped", func() bool {
		notes := pacedNotes(f, "frozen")
		return len(notes) == 1 && strings.Contains(notes[0], "stopped")
	})
	// The Event comes of the pass that planned the rollout and made nothing for it.
	if n := r.freshSeen(); n != 0 {
		t.Fatalf("%d fresh claims made while a budget of 0 freezes drift", n)
	}

	stack.Patch(f, pool, func(p *v1beta1.NodePool) {
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "1", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionDrifted}}}
	})
	f.Eventually("3 fresh standby nodes replace the 3 drifted ones", func() bool { return r.replaced(3) })
	mostWarming, fewestReady, trace := r.measures()
	t.Logf("claims at each change: %s", trace)
	if mostWarming != 1 || fewestReady < 3 {
		t.Fatalf("%d fresh claims warmed at once and %d stood by at the fewest, want 1 and 3: %s", mostWarming, fewestReady, trace)
	}
	if notes := pacedNotes(f, "frozen"); len(notes) != 2 || !strings.Contains(notes[1]+notes[0], "1 at a time") {
		t.Fatalf("StandbyReplacementPaced Events %q, want the freeze's and then one saying 1 at a time", notes)
	}
	f.CheckInvariants()
}

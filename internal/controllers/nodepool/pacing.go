package nodepool

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/budgets"
)

// ReasonStandbyReplacementPaced is the Event a pool gets when its disruption budgets
// hold back the replacement of stale standby nodes: once when it starts, and again only
// when the budget or the reason holding it changes.
const ReasonStandbyReplacementPaced = "StandbyReplacementPaced"

// budgetRecheck is how soon a pool whose replacements a budget holds back looks again
// when a budget has a schedule: schedules fire on the minute, and nothing else would
// bring the pool back when one starts or ends.
const budgetRecheck = time.Minute

// staleReasons are the reasons a standby claim is stale (claimtemplate.Stale).
var staleReasons = []v1beta1.DisruptionReason{v1beta1.DisruptionDrifted, v1beta1.DisruptionExpired}

// replacementBudgets is how many fresh standby claims may warm up at once while stale
// ones wait, for each reason a claim is stale: what the pool's disruption budgets allow
// for that reason, a percentage taken of the warm pool's target and rounded up, as
// disruption reads them for running nodes. Budgets that cannot be read allow nothing,
// as they do for disruption (the pool's BudgetsValid condition says why).
func replacementBudgets(pool *v1beta1.NodePool, target int32, now time.Time) map[v1beta1.DisruptionReason]int {
	allowed := map[v1beta1.DisruptionReason]int{}
	for _, reason := range staleReasons {
		n, err := budgets.Allowed(pool.Spec.Disruption.Budgets, reason, int(target), now)
		if err != nil {
			n = 0
		}
		allowed[reason] = n
	}
	return allowed
}

// pace bounds want, the standby claims the pass would create, where they replace stale
// claims. Slots no stale claim stands by in (a shortfall: pods took standby nodes, or
// the target rose) are filled at once, budget or not, so the warm pool keeps its size.
// The rest replace stale claims that stand by: fresh claims warm up at most so many at
// a time as the budget of the reason the next stale claim is stale for allows, the
// fresh claims warming now and the shortfall counting against it. Replacements follow
// the order in which stale claims are removed (replacementOrder) and stop at the first
// whose budget is spent: a later one replaced first would have an earlier one, which
// its budget holds, removed in its place. A reason g.replaceAtMost does not name may
// replace none.
func (p *plan) pace(g goal, want int, fresh, stale []member) int {
	if g.replaceAtMost == nil || want == 0 {
		return want
	}
	standing, warming := 0, 0
	for _, m := range stale {
		if m.ready {
			standing++
		}
	}
	for _, m := range fresh {
		if !m.ready {
			warming++
		}
	}
	shortfall := max(want-standing, 0)
	replace := want - shortfall
	// The stale claims in excess of the target are removed first: fresh claims stand
	// by in their place already, or warm up for it. The next are those replaced now.
	next := stale[min(max(len(fresh)+len(stale)-int(g.target), 0), len(stale)):]
	busy := warming + shortfall
	started := 0
	for started < replace && started < len(next) && busy+started < g.replaceAtMost[next[started].stale] {
		started++
	}
	if started < replace && started < len(next) {
		p.paced, p.pacedBy = replace-started, next[started].stale
	}
	return shortfall + started
}

// replacementOrder sorts stale claims in the order they are replaced and removed:
// expired ones first, as they are past their time, then by creation and name.
func replacementOrder(stale []member) {
	oldestFirst(stale)
	sort.SliceStable(stale, func(a, b int) bool {
		return stale[a].stale == v1beta1.DisruptionExpired && stale[b].stale != v1beta1.DisruptionExpired
	})
}

// pacedMessage is the note of a StandbyReplacementPaced Event.
func pacedMessage(p plan, allowed int) string {
	if allowed == 0 {
		return fmt.Sprintf("Replacing stale standby nodes is stopped: the pool's disruption budgets allow no replacement for %s now; %d stale standby nodes wait",
			p.pacedBy, p.paced)
	}
	return fmt.Sprintf("Replacing stale standby nodes %d at a time, as the pool's disruption budgets allow for %s; %d wait",
		allowed, p.pacedBy, p.paced)
}

// pacingNotes remembers, for each pool, what last held its standby replacements back,
// so that the pool gets an Event when that changes rather than at every pass. It is
// kept in memory: after a restart a pool still held back gets one Event again. Pools are
// reconciled concurrently.
type pacingNotes struct {
	mu   sync.Mutex
	last map[string]string
}

// changed records what holds the pool's replacements back now ("" for nothing) and
// reports whether that is news worth an Event: something holds them, and not the same
// as at the last pass.
func (n *pacingNotes) changed(pool, holding string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.last == nil {
		n.last = map[string]string{}
	}
	before := n.last[pool]
	if holding == "" {
		delete(n.last, pool)
		return false
	}
	n.last[pool] = holding
	return holding != before
}

// hasSchedule reports whether a budget of the pool applies only on a schedule.
func hasSchedule(pool *v1beta1.NodePool) bool {
	for _, b := range pool.Spec.Disruption.Budgets {
		if b.Schedule != nil {
			return true
		}
	}
	return false
}

package nodepool

import (
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/limits"
	"github.com/stratos-sh/stratos/internal/standby"
)

// member is what planning needs to know of one claim of a pool.
type member struct {
	name     string
	standby  bool // it is asked to be standby
	ready    bool // it stands by, warmed up and stopped
	deleting bool
	// stale says why a claim is replaced rather than kept: it was launched from an
	// older template, image or profile (Drifted), or it expired (Expired); "" when fresh.
	stale   v1beta1.DisruptionReason
	phase   v1beta1.NodeClaimPhase
	created time.Time
	// zone is where its instance is, or the zone it is pinned to; "" when unknown.
	zone string
	// held is set for a standby claim whose offering is marked unavailable (its zone is
	// out of capacity): it could not start now. The pool makes up for it elsewhere and
	// keeps it, to count again once the mark expires.
	held bool
}

// goal is what the pool aims for now: its spec with the active window's overrides.
type goal struct {
	// target is the warm pool's size and ceiling how many standby nodes it keeps.
	target, ceiling int32
	// minRunning is how many nodes run at least, pods or not.
	minRunning int32
	// maxNodes is the cap on the pool's claims in force (limits.nodes or the window's
	// maxNodes); nil when none.
	maxNodes *int32
	// newAtMost bounds the claims the pass creates, launches and standby claims
	// together (the creations per pass and per minute); standbyAtMost bounds the
	// standby claims (a pool backing off after failed warm-ups). nil: no bound.
	newAtMost, standbyAtMost *int
	// replaceAtMost bounds how many fresh standby claims warm up at once while stale
	// ones wait for their replacement, by the reason each is stale: what the pool's
	// disruption budgets allow for that reason (pacing.go). nil: no bound.
	replaceAtMost map[v1beta1.DisruptionReason]int
}

// bound is n within atMost, unless atMost is nil.
func bound(n int, atMost *int) int {
	if atMost == nil {
		return n
	}
	return max(min(n, *atMost), 0)
}

// plan is everything the pool controller does in one pass, decided at once so that no
// part of it can push the pool past its limits: the running minimum comes first, the
// warm pool gets what the limits leave.
type plan struct {
	// start are the standby claims to ask to run for the running minimum, and launch
	// how many claims to create asked to run for the rest of it.
	start  []string
	launch int
	// create is how many standby claims to create.
	create int
	// remove are the standby claims to delete, in order.
	remove []string
	// limited says which limit kept the plan below what the pool aims for, if one did.
	limited string
	// throttled is set when the bound on new claims (per pass, per minute) cut the plan.
	throttled bool
	// paced counts the stale standby claims whose replacement the budgets hold back this
	// pass; pacedBy is the reason whose budget held the first of them.
	paced   int
	pacedBy v1beta1.DisruptionReason
}

// planPool decides one pass. The running minimum starts standby claims, the readiest
// first, and launches the rest within the limits. The standby claims left are kept
// between target and ceiling: a shortfall below target is created in one pass within
// what the limits still leave, an excess above ceiling removed, from the zone that has
// most, the oldest first (zones.go). left
// is what the limits leave given every claim of the pool; perNode is the capacity of the
// node a new claim would most likely get (nil when unknown: only the node cap counts).
//
// Stale standby claims are replaced: fresh ones are created for the target as if the
// stale ones were not there, and each stale one is removed once a fresh one stands by in
// its place, so the warm pool never runs short while its replacements warm up. The
// replacements are paced by the budgets (g.replaceAtMost, pacing.go); a shortfall, slots
// no stale claim holds, is not. When the limits leave no room for the replacements,
// stale claims are removed first to make it.
func planPool(g goal, members []member, left limits.Left, perNode corev1.ResourceList) plan {
	var fresh, stale []member
	live, running := 0, 0
	for _, m := range members {
		if m.deleting {
			continue
		}
		live++
		switch {
		case !m.standby:
			running++
		case m.held:
		case m.stale != "":
			stale = append(stale, m)
		default:
			fresh = append(fresh, m)
		}
	}
	var p plan
	fresh, stale = p.startForMinimum(int(g.minRunning)-running, fresh, stale, &left, perNode)
	launch := bound(p.launch, g.newAtMost)
	p.throttled = launch < p.launch
	p.launch = launch
	var rateLeft *int
	if g.newAtMost != nil {
		n := *g.newAtMost - p.launch
		rateLeft = &n
	}
	ceiling := max(g.ceiling, g.target)
	replacementOrder(stale)
	oldestFirst(fresh)
	// Above the cap on nodes (a window may lower it, to 0 at night), standby claims go
	// first, stale ones first; running nodes are disruption's to give back.
	if g.maxNodes != nil && live > int(*g.maxNodes) {
		over := live - int(*g.maxNodes)
		p.remove = namesOf(stale[:min(over, len(stale))], fullestFirst(fresh, over-len(stale)))
		return p
	}
	if excess := len(fresh) - int(ceiling); excess > 0 {
		p.remove = namesOf(stale, fullestFirst(fresh, excess))
		return p
	}
	ready := 0
	for _, m := range fresh {
		if m.ready {
			ready++
		}
	}
	// A stale claim that never stood by (it expired while warming up) is still coming:
	// it is counted as coming, or a pool whose nodes expire faster than they warm up
	// would create claims without end.
	coming := 0
	for _, m := range stale {
		if !m.ready {
			coming++
		}
	}
	want := p.pace(g, max(int(g.target)-len(fresh)-coming, 0), fresh, stale)
	fit := p.within(want, left, perNode)
	p.create = bound(fit, g.standbyAtMost)
	if n := bound(p.create, rateLeft); n < p.create {
		p.create, p.throttled = n, true
	}
	// Stale claims hold the warm pool's ready count while fresh ones warm up; those
	// beyond it go now, and so do those whose place the limits cannot give a fresh one.
	// A bound on creations (per pass, per minute, a backoff) only delays the fresh
	// ones: the stale ones wait for them.
	keep := min(max(int(g.target)-ready, 0), len(stale))
	keep = max(keep-(want-fit), 0)
	p.remove = namesOf(stale[:len(stale)-keep])
	return p
}

// startForMinimum plans the running minimum's share: short more nodes must run. It
// starts fresh standby claims before stale ones, which the pool replaces anyway (as
// provisioning ranks them, schedulinginput.StaleRank), the readiest first within each, and
// launches the rest within what left allows, which it spends. It returns the standby
// claims not started.
func (p *plan) startForMinimum(short int, fresh, stale []member, left *limits.Left, perNode corev1.ResourceList) ([]member, []member) {
	if short <= 0 {
		return fresh, stale
	}
	candidates := append(append([]member(nil), fresh...), stale...)
	sort.SliceStable(candidates, func(a, b int) bool {
		x, y := candidates[a], candidates[b]
		if (x.stale == "") != (y.stale == "") {
			return x.stale == ""
		}
		if rx, ry := readiness(x.phase), readiness(y.phase); rx != ry {
			return rx < ry
		}
		return x.name < y.name
	})
	started := map[string]bool{}
	for _, m := range candidates[:min(short, len(candidates))] {
		p.start = append(p.start, m.name)
		started[m.name] = true
	}
	p.launch = p.within(short-len(p.start), *left, perNode)
	for range p.launch {
		left.Take(perNode)
	}
	notStarted := func(ms []member) []member {
		var out []member
		for _, m := range ms {
			if !started[m.name] {
				out = append(out, m)
			}
		}
		return out
	}
	return notStarted(fresh), notStarted(stale)
}

// within is how many of want new claims the limits allow; it remembers the limit that
// cut the number, if one did.
func (p *plan) within(want int, left limits.Left, perNode corev1.ResourceList) int {
	if want <= 0 {
		return 0
	}
	n, why := left.Fit(perNode)
	if n < want {
		if p.limited == "" {
			p.limited = why
		}
		return n
	}
	return want
}

// readiness orders standby claims to start for a running minimum as provisioning
// orders them for pods: the sooner one runs, the earlier. A claim that is no standby
// capacity (a running node being given back) comes last.
func readiness(phase v1beta1.NodeClaimPhase) int {
	if rank, ok := standby.Rank(phase); ok {
		return rank
	}
	return math.MaxInt
}

// namesOf lists the names of the members of each group in turn.
func namesOf(groups ...[]member) []string {
	var names []string
	for _, g := range groups {
		for _, m := range g {
			names = append(names, m.name)
		}
	}
	return names
}

// oldestFirst sorts members by creation, then name.
func oldestFirst(members []member) {
	sort.SliceStable(members, func(a, b int) bool {
		x, y := members[a], members[b]
		if !x.created.Equal(y.created) {
			return x.created.Before(y.created)
		}
		return x.name < y.name
	})
}

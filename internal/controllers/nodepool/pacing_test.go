package nodepool

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// budgetsFor are the replacement budgets of a pool with those disruption budgets and
// that standby target, at now.
func budgetsFor(target int32, now time.Time, b ...v1beta1.Budget) map[v1beta1.DisruptionReason]int {
	pool := &v1beta1.NodePool{Spec: v1beta1.NodePoolSpec{Disruption: v1beta1.Disruption{Budgets: b}}}
	return replacementBudgets(pool, target, now)
}

func driftBudget(nodes string) v1beta1.Budget {
	return v1beta1.Budget{Nodes: nodes, Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionDrifted}}
}

func expired(ms []member) []member {
	for i := range ms {
		ms[i].stale = v1beta1.DisruptionExpired
		ms[i].name = "expired" + ms[i].name[len("stale"):]
	}
	return ms
}

func join(groups ...[]member) []member { return slices.Concat(groups...) }

// mondayNoon is within a budget that applies on weekdays from 09:00 for 8 hours, UTC.
var mondayNoon = time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)

func TestPlanPacesTheReplacementOfStaleStandby(t *testing.T) {
	office := v1beta1.Budget{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionDrifted},
		Schedule: ptr.To("0 9 * * 1-5"), Duration: v1beta1.NewDuration(8 * time.Hour)}
	cases := []struct {
		name            string
		target, ceiling int32
		minRunning      int32
		members         []member
		budgets         []v1beta1.Budget
		now             time.Time
		limits          v1beta1.Limits
		newAtMost       *int
		standbyAtMost   *int
		// what the plan must be
		create, launch int
		remove         []string
		paced          int
		pacedBy        v1beta1.DisruptionReason
	}{
		{name: "an AMI release under a budget of 10% replaces 5 of 50 at a time",
			target: 50, ceiling: 50, members: staleMembers(50, true), budgets: []v1beta1.Budget{driftBudget("10%")},
			create: 5, paced: 45, pacedBy: v1beta1.DisruptionDrifted},
		{name: "the default budget (10%) paces as well",
			target: 50, ceiling: 50, members: staleMembers(50, true),
			create: 5, paced: 45, pacedBy: v1beta1.DisruptionDrifted},
		{name: "the bound on creations per pass still applies within the budget",
			target: 50, ceiling: 50, members: staleMembers(50, true), budgets: []v1beta1.Budget{driftBudget("50%")}, newAtMost: ptr.To(20),
			create: 20, paced: 25, pacedBy: v1beta1.DisruptionDrifted},
		{name: "a backing-off pool creates nothing and keeps its stale claims",
			target: 4, ceiling: 4, members: staleMembers(4, true), budgets: []v1beta1.Budget{driftBudget("100%")}, standbyAtMost: ptr.To(0)},
		{name: "nothing more while 5 replacements warm up",
			target: 50, ceiling: 50, members: join(staleMembers(50, true), freshMembers(5, false)), budgets: []v1beta1.Budget{driftBudget("10%")},
			create: 0, paced: 45, pacedBy: v1beta1.DisruptionDrifted},
		{name: "once 5 stand by, the 5 oldest stale go and the next 5 are replaced",
			target: 50, ceiling: 50, members: join(staleMembers(50, true), freshMembers(5, true)), budgets: []v1beta1.Budget{driftBudget("10%")},
			create: 5, remove: []string{"stale0", "stale1", "stale2", "stale3", "stale4"}, paced: 40, pacedBy: v1beta1.DisruptionDrifted},
		{name: "3 of 5 warming leave room for 2",
			target: 50, ceiling: 50, members: join(staleMembers(50, true), warmingFresh(3)), budgets: []v1beta1.Budget{driftBudget("5")},
			create: 2, paced: 45, pacedBy: v1beta1.DisruptionDrifted},
		{name: "a budget of 0 for Drifted freezes the rollout",
			target: 50, ceiling: 50, members: staleMembers(50, true), budgets: []v1beta1.Budget{driftBudget("0"), {Nodes: "100%"}},
			create: 0, paced: 50, pacedBy: v1beta1.DisruptionDrifted},
		{name: "a frozen rollout still refills a warm pool pods took nodes from",
			target: 6, ceiling: 6, members: staleMembers(4, true), budgets: []v1beta1.Budget{driftBudget("0")},
			create: 2, paced: 4, pacedBy: v1beta1.DisruptionDrifted},
		{name: "the refill counts against the budget: no replacement besides it",
			target: 6, ceiling: 6, members: staleMembers(4, true), budgets: []v1beta1.Budget{driftBudget("2")},
			create: 2, paced: 4, pacedBy: v1beta1.DisruptionDrifted},
		{name: "mixed fresh and stale: only the stale are replaced, 1 at a time",
			target: 6, ceiling: 6, members: join(freshMembers(3, true), staleMembers(3, true)), budgets: []v1beta1.Budget{driftBudget("1")},
			create: 1, paced: 2, pacedBy: v1beta1.DisruptionDrifted},
		{name: "a percentage is of the target, rounded up: 33% of 6 is 2",
			target: 6, ceiling: 6, members: staleMembers(6, true), budgets: []v1beta1.Budget{driftBudget("33%")},
			create: 2, paced: 4, pacedBy: v1beta1.DisruptionDrifted},
		{name: "a small percentage still replaces one at a time",
			target: 3, ceiling: 3, members: staleMembers(3, true), budgets: []v1beta1.Budget{driftBudget("1%")},
			create: 1, paced: 2, pacedBy: v1beta1.DisruptionDrifted},
		{name: "the most restrictive active budget applies",
			target: 10, ceiling: 10, members: staleMembers(10, true), budgets: []v1beta1.Budget{{Nodes: "50%"}, driftBudget("3"), {Nodes: "4"}},
			create: 3, paced: 7, pacedBy: v1beta1.DisruptionDrifted},
		{name: "a scheduled freeze holds within its schedule",
			target: 4, ceiling: 4, members: staleMembers(4, true), budgets: []v1beta1.Budget{office, {Nodes: "2"}}, now: mondayNoon,
			create: 0, paced: 4, pacedBy: v1beta1.DisruptionDrifted},
		{name: "outside its schedule the other budgets apply",
			target: 4, ceiling: 4, members: staleMembers(4, true), budgets: []v1beta1.Budget{office, {Nodes: "2"}}, now: mondayNoon.Add(6 * time.Hour),
			create: 2, paced: 2, pacedBy: v1beta1.DisruptionDrifted},
		{name: "a budget that cannot be read replaces nothing",
			target: 4, ceiling: 4, members: staleMembers(4, true), now: mondayNoon,
			budgets: []v1beta1.Budget{{Nodes: "2", Schedule: ptr.To("@daily"), TimeZone: ptr.To[v1beta1.TimeZone]("Mars/Olympus"), Duration: v1beta1.NewDuration(time.Hour)}},
			create:  0, paced: 4, pacedBy: v1beta1.DisruptionDrifted},
		{name: "no budget for the reason: all at once, as before",
			target: 4, ceiling: 4, members: staleMembers(4, true), budgets: []v1beta1.Budget{{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionEmpty}}},
			create: 4},
		{name: "stale claims beyond the ceiling go though the budget is 0",
			target: 2, ceiling: 2, members: join(freshMembers(3, true), staleMembers(2, true)), budgets: []v1beta1.Budget{driftBudget("0")},
			remove: []string{"stale0", "stale1", "fresh0"}},
		{name: "stale claims above the target go though the budget is 0",
			target: 1, ceiling: 3, members: join(freshMembers(1, true), staleMembers(2, true)), budgets: []v1beta1.Budget{driftBudget("0")},
			remove: []string{"stale0", "stale1"}},
		{name: "stale claims above the node cap go though the budget is 0",
			target: 3, ceiling: 3, members: staleMembers(3, true), budgets: []v1beta1.Budget{driftBudget("0")}, limits: v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("1")},
			remove: []string{"stale0", "stale1"}},
		{name: "stale claims still warming count as coming: nothing is replaced for them",
			target: 2, ceiling: 2, members: staleMembers(2, false), budgets: []v1beta1.Budget{driftBudget("1")}},
		{name: "limits that leave no room remove only as many stale claims as are paced",
			target: 4, ceiling: 4, members: staleMembers(4, true), budgets: []v1beta1.Budget{driftBudget("1")}, limits: v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("4")},
			remove: []string{"stale0"}, paced: 3, pacedBy: v1beta1.DisruptionDrifted, create: 0},
		{name: "limits that leave room for 1 of 2 paced: one created, one stale removed to make room",
			target: 4, ceiling: 4, members: staleMembers(4, true), budgets: []v1beta1.Budget{driftBudget("2")}, limits: v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("5")},
			create: 1, remove: []string{"stale0"}, paced: 2, pacedBy: v1beta1.DisruptionDrifted},
		{name: "the running minimum starts a stale node first; refilling its slot uses the budget",
			target: 4, ceiling: 4, minRunning: 1, members: staleMembers(4, true), budgets: []v1beta1.Budget{driftBudget("1")},
			create: 1, paced: 3, pacedBy: v1beta1.DisruptionDrifted},
		{name: "expired claims are replaced first, under the budget for Expired, while drift is frozen",
			target: 4, ceiling: 4, members: join(staleMembers(2, true), expired(staleMembers(2, true))),
			budgets: []v1beta1.Budget{driftBudget("0"), {Nodes: "2"}},
			create:  2, paced: 2, pacedBy: v1beta1.DisruptionDrifted},
		{name: "once the expired ones' replacements stand by, the expired go, not the drifted",
			target: 4, ceiling: 4, members: join(staleMembers(2, true), expired(staleMembers(2, true)), freshMembers(2, true)),
			budgets: []v1beta1.Budget{driftBudget("0"), {Nodes: "2"}},
			remove:  []string{"expired0", "expired1"}, paced: 2, pacedBy: v1beta1.DisruptionDrifted},
		{name: "a budget of 0 for Expired holds expired claims and what is behind them",
			target: 4, ceiling: 4, members: join(staleMembers(2, true), expired(staleMembers(2, true))),
			budgets: []v1beta1.Budget{{Nodes: "0", Reasons: []v1beta1.DisruptionReason{v1beta1.DisruptionExpired}}, {Nodes: "2"}},
			paced:   4, pacedBy: v1beta1.DisruptionExpired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := c.now
			if now.IsZero() {
				now = epoch
			}
			g := goal{target: c.target, ceiling: c.ceiling, minRunning: c.minRunning, newAtMost: c.newAtMost, standbyAtMost: c.standbyAtMost,
				replaceAtMost: budgetsFor(c.target, now, c.budgets...)}
			p := planWith(g, c.members, c.limits, nil)
			if p.create != c.create || p.launch != c.launch || !slices.Equal(p.remove, c.remove) || p.paced != c.paced || p.pacedBy != c.pacedBy {
				t.Fatalf("plan = create %d, launch %d, remove %v, paced %d by %q; want create %d, launch %d, remove %v, paced %d by %q",
					p.create, p.launch, p.remove, p.paced, p.pacedBy, c.create, c.launch, c.remove, c.paced, c.pacedBy)
			}
		})
	}
}

// warmingFresh are n fresh standby claims still warming up, named apart from
// freshMembers'.
func warmingFresh(n int) []member {
	out := freshMembers(n, false)
	for i := range out {
		out[i].name = fmt.Sprintf("warming%d", i)
	}
	return out
}

// A rollout of 50 stale standby nodes under a budget of 10%, pass after pass, with each
// pass's new claims warmed up before the next: never more than 5 warm at once, the ready
// count never drops below the target, and all 50 are replaced in 10 rounds.
func TestPlanRollsAWarmPoolOut5AtATime(t *testing.T) {
	members := staleMembers(50, true)
	g := goal{target: 50, ceiling: 50, replaceAtMost: budgetsFor(50, epoch, driftBudget("10%"))}
	rounds, created := 0, 0
	for ; rounds < 100; rounds++ {
		p := planWith(g, members, nil, nil)
		removed := map[string]bool{}
		for _, name := range p.remove {
			removed[name] = true
		}
		var next []member
		stale, ready := 0, 0
		for _, m := range members {
			if removed[m.name] {
				continue
			}
			next = append(next, m)
			if m.stale != "" {
				stale++
			}
			if m.ready {
				ready++
			}
		}
		if ready < 50 {
			t.Fatalf("round %d: %d ready standby nodes, fewer than the target", rounds, ready)
		}
		if p.create > 5 {
			t.Fatalf("round %d: %d replacements at once, want at most 5", rounds, p.create)
		}
		if stale == 0 && p.create == 0 {
			break
		}
		// The new claims warm up, then stand by, before the next pass.
		for range p.create {
			next = append(next, member{name: fmt.Sprintf("new%d", created), standby: true, created: epoch.Add(time.Duration(created+100) * time.Minute)})
			created++
		}
		if p.create > 0 {
			if q := planWith(g, next, nil, nil); q.create != 0 || len(q.remove) != 0 {
				t.Fatalf("round %d: while %d replacements warm up the plan is %+v, want nothing", rounds, p.create, q)
			}
		}
		for i := range next {
			next[i].ready = true
		}
		members = next
	}
	if created != 50 || rounds != 10 {
		t.Fatalf("created %d in %d rounds, want 50 in 10", created, rounds)
	}
}

// The pool gets an Event when its replacements start to be held back, and again only
// when what holds them changes.
func TestPacingIsNotedOncePerChange(t *testing.T) {
	var notes pacingNotes
	steps := []struct {
		holding string
		news    bool
	}{
		{"Drifted/5", true}, {"Drifted/5", false}, {"Drifted/5", false},
		{"Drifted/0", true}, {"Drifted/0", false},
		{"", false}, {"Drifted/0", true},
	}
	for i, s := range steps {
		if got := notes.changed("web", s.holding); got != s.news {
			t.Fatalf("step %d (%q): news %v, want %v", i, s.holding, got, s.news)
		}
	}
	if !notes.changed("api", "Drifted/0") {
		t.Fatal("another pool's first hold is news")
	}
}

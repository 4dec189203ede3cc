package learned_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/test/stack"
)

// A pool whose history shows a daily peak of 4 nodes at 09:00 on the last five days
// holds its minimum of 1 at 08:40, stands 4 nodes by at 08:50 (09:00 is within its
// warm-up and one interval), says why in its status and an Event, and gives the extra
// nodes back by 11:00.
func TestALearnedPoolStandsItsDailyPeakByBeforeIt(t *testing.T) {
	f, calendar := stack.NewFixtureWithCalendar(t, tuesday(8, 40))
	p := learnedPool(f, "daily", 1, nil)
	seedHistory(f, p, tuesday(0, 0).AddDate(0, 0, -5), tuesday(0, 0).AddDate(0, 0, -1), 4)

	f.WaitForPhase("daily", 1, v1beta1.PhaseStandby)
	f.Eventually("at 08:40 the target is the minimum, the peak out of sight", func() bool {
		l := learned(f, "daily")
		return l.Target == 1 && l.Forecast == 0 && l.Days == 5 && l.Lead != nil
	})

	stack.MoveCalendar(f, calendar, "daily", tuesday(8, 50))
	f.Eventually("at 08:50 the target is the peak's 4", func() bool { return learned(f, "daily").Target == 4 })
	f.Eventually("4 nodes stand by", func() bool { return standby(f, "daily") == 4 })
	l := learned(f, "daily")
	if l.Forecast != 4 || l.Bucket != "Tue 09:00-09:15 Europe/Berlin" || l.Percentile != 90 || l.Days != 5 || l.Running != 0 ||
		!strings.Contains(l.Message, "p90") || l.LastChangeTime == nil || !l.LastChangeTime.Time.Equal(tuesday(8, 50)) {
		t.Fatalf("status.learned %+v: want target and forecast 4 for Tue 09:00-09:15 Europe/Berlin, p90 over 5 days, changed at 08:50", l)
	}
	if s := pool(f, "daily").Status.StandbyTarget; s != 4 {
		t.Fatalf("status.standbyTarget %d, want 4", s)
	}
	if target, forecast := testutil.ToFloat64(metrics.PoolLearnedStandbyTarget.WithLabelValues("daily")),
		testutil.ToFloat64(metrics.PoolForecastNodes.WithLabelValues("daily")); target != 4 || forecast != 4 {
		t.Fatalf("metrics: learned target %v, forecast %v; want 4 and 4", target, forecast)
	}
	notes := eventNotes(f, "daily", nodepool.ReasonLearnedTargetChanged)
	if len(notes) != 1 || !strings.Contains(notes[0], "target 4 (was 1)") || !strings.Contains(notes[0], "Tue 09:00-09:15 Europe/Berlin") || !strings.Contains(notes[0], "p90") {
		t.Fatalf("%s Events %q: want one, from 1 to 4, with the bucket and the percentile", nodepool.ReasonLearnedTargetChanged, notes)
	}

	stack.MoveCalendar(f, calendar, "daily", tuesday(11, 0))
	f.Eventually("at 11:00 the target is the minimum again", func() bool { return learned(f, "daily").Target == 1 })
	f.Eventually("an Event says so", func() bool {
		notes := eventNotes(f, "daily", nodepool.ReasonLearnedTargetChanged)
		return len(notes) == 2 && strings.Contains(notes[1], "target 1 (was 4)")
	})
	f.Eventually("the extra standby nodes go", func() bool { return len(f.Claims("daily")) == 1 && standby(f, "daily") == 1 })
	f.CheckInvariants()
}

// Pending pods' nodes land in the pool's NodePoolDemand, owned by the pool, at the
// interval of the calendar they were needed in; after an operator restart the new
// operator forecasts the next day's peak from it.
func TestRecordedDemandSurvivesARestart(t *testing.T) {
	f, calendar := stack.NewFixtureWithCalendar(t, tuesday(9, 1))
	p := learnedPool(f, "recorded", 0, nil)
	countedBefore := demandCounted(t, "recorded") // a test run again in this process counted before
	pendingPods(f, "recorded", 3)
	f.Eventually("3 claims are launched for the pods", func() bool { return len(f.Claims("recorded")) == 3 })

	// The interval ends: the recorder writes what it counted in it.
	calendar.SetTime(tuesday(9, 16))
	recorded := func() int32 { return recordedAt(f, "recorded", "2026-11-24", 36) }
	f.Eventually("3 nodes are recorded at Tue 09:00-09:15", func() bool { return recorded() == 3 })
	demand := &v1beta1.NodePoolDemand{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: "recorded"}, demand); err != nil {
		t.Fatal(err)
	}
	if ref := demand.OwnerReferences; len(ref) != 1 || ref[0].UID != p.UID || !ptr.Deref(ref[0].Controller, false) {
		t.Fatalf("owner references %+v: want the pool as controller", ref)
	}
	if demand.Spec.Since != "2026-11-24" || demand.Spec.TimeZone != "Europe/Berlin" || demand.Spec.Interval.Duration != 15*time.Minute {
		t.Fatalf("history %+v: want since 2026-11-24, Europe/Berlin, 15m", demand.Spec)
	}

	if counted := demandCounted(t, "recorded") - countedBefore; counted != 3 {
		t.Fatalf("stratos_nodepool_demand_nodes of the pool grew by %v, want 3", counted)
	}

	f.RestartOperator(f.Opts)
	if got := recorded(); got != 3 {
		t.Fatalf("%d nodes recorded after the restart, want the 3 before", got)
	}
	stack.MoveCalendar(f, calendar, "recorded", tuesday(8, 50).AddDate(0, 0, 1))
	f.Eventually("the new operator forecasts Wednesday's 09:00 from Tuesday's demand", func() bool {
		l := learned(f, "recorded")
		return l.Target == 3 && l.Forecast == 3 && l.Days == 1 && l.Bucket == "Wed 09:00-09:15 Europe/Berlin"
	})
	f.Eventually("3 nodes stand by for it", func() bool { return standby(f, "recorded") == 3 })
	// No pod needed a node since: the new operator wrote no demand.
	for _, write := range []string{"create NodePoolDemand", "update NodePoolDemand", "patch NodePoolDemand"} {
		if n := f.Op.Writes.Counts()[write]; n != 0 {
			t.Fatalf("the new operator made %d writes %q with no new demand", n, write)
		}
	}
}

// With preStart, a peak seen on each of the last five days (minDays 3) starts its
// nodes from 08:58: they run before the peak. The peak's pods land on three of them, so
// provisioning starts and launches nothing, yet the three count as the interval's
// demand; after the peak the empty node stops running.
func TestPreStartRunsTheNodesBeforeAConfidentPeak(t *testing.T) {
	f, calendar := stack.NewFixtureWithCalendar(t, tuesday(8, 50))
	p := learnedPool(f, "prestart", 0, func(p *v1beta1.NodePool) {
		p.Spec.Standby.Learned.PreStart = &v1beta1.PreStart{Lead: v1beta1.NewDuration(2 * time.Minute), MinDays: 3}
		p.Spec.Disruption.ConsolidateAfter = &v1beta1.Duration{Duration: time.Second}
	})
	seedHistory(f, p, tuesday(0, 0).AddDate(0, 0, -5), tuesday(0, 0).AddDate(0, 0, -1), 4)
	f.Eventually("4 nodes stand by at 08:50", func() bool { return standby(f, "prestart") == 4 })
	if l := learned(f, "prestart"); l.Running != 0 {
		t.Fatalf("status.learned %+v: nothing should run ahead at 08:50", l)
	}

	stack.MoveCalendar(f, calendar, "prestart", tuesday(8, 58))
	running := func() []v1beta1.NodeClaim {
		var out []v1beta1.NodeClaim
		for _, c := range f.Claims("prestart") {
			if c.Spec.DesiredState == v1beta1.DesiredRunning && c.Status.Phase == v1beta1.PhaseRunning {
				out = append(out, c)
			}
		}
		return out
	}
	f.Eventually("4 nodes run at 08:58, before the peak", func() bool { return len(running()) == 4 })
	// The pool's status is written at most once a second: it may follow the claims by that.
	f.Eventually("status.learned says 4 run ahead of the peak", func() bool {
		l := learned(f, "prestart")
		return l.Running == 4 && strings.Contains(l.Message, "run ahead")
	})

	// The peak: kube-scheduler (which this test stands in for) binds three pods to three
	// of the running nodes.
	for i, c := range running()[:3] {
		boundPod(f, "prestart", i, c.Status.NodeName)
	}
	stack.MoveCalendar(f, calendar, "prestart", tuesday(9, 5))
	stack.MoveCalendar(f, calendar, "prestart", tuesday(9, 16))
	f.Eventually("the 3 pre-started nodes serving pods are recorded as Tue 09:00's demand", func() bool {
		return recordedAt(f, "prestart", "2026-11-24", 36) == 3
	})
	if n := f.Op.Writes.Counts()["create NodeClaim"]; n != 4 {
		t.Fatalf("%d claims created, want the 4 standby ones only: the pods needed no launch", n)
	}
	// The warm pool's target is back at standby.min, 0: the empty node is not kept.
	f.Eventually("after the peak the empty node stops running", func() bool {
		return len(running()) == 3 && learned(f, "prestart").Running == 0 && learned(f, "prestart").Target == 0
	})
}

// A learned target stays within standby.max and limits.nodes: a forecast of 6 stands 2
// by under standby.max 2, and 3 under limits.nodes 3, never more claims than that.
func TestALearnedTargetStaysWithinMaxAndLimits(t *testing.T) {
	f, _ := stack.NewFixtureWithCalendar(t, tuesday(8, 50))
	capped := learnedPool(f, "capped", 1, func(p *v1beta1.NodePool) { p.Spec.Standby.Max = ptr.To[int32](2) })
	limited := learnedPool(f, "limited", 1, func(p *v1beta1.NodePool) {
		p.Spec.Limits = v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("3")}
	})
	seedHistory(f, capped, tuesday(0, 0).AddDate(0, 0, -5), tuesday(0, 0).AddDate(0, 0, -1), 6)
	seedHistory(f, limited, tuesday(0, 0).AddDate(0, 0, -5), tuesday(0, 0).AddDate(0, 0, -1), 6)
	most := map[string]int{}
	within := func(name string, want int32) bool {
		n := len(f.Claims(name))
		most[name] = max(most[name], n)
		l := learned(f, name)
		return l.Forecast == 6 && l.Target == want && standby(f, name) == int(want)
	}
	f.Eventually("the capped pool stands 2 by for a forecast of 6", func() bool { return within("capped", 2) })
	f.Eventually("the limited pool stands 3 by for a forecast of 6", func() bool { return within("limited", 3) })
	if most["capped"] > 2 || most["limited"] > 3 {
		t.Fatalf("claims seen at most: %v; want at most 2 and 3", most)
	}
	// Every claim the operator ever created is one of those: none was made over the
	// bounds and removed between two looks.
	if created := f.Op.Writes.Counts()["create NodeClaim"]; created > 5 {
		t.Fatalf("%d claims created, want at most 2 + 3", created)
	}
	f.CheckInvariants()
}

package runner

import (
	"testing"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/report"
)

// startsOnly is a cloud that knows only the start calls it received.
type startsOnly struct {
	simCloud
	starts []startCall
}

func (s startsOnly) startCalls() []startCall { return s.starts }

// TestRecoveriesJoinWhatTheObserverSaw checks the join of the steps' displacements with
// the observer's pods, Nodes and start calls: the owners and deletions of the displaced
// pods, the Node each replacement ran on and how it came, interruptions apart from
// repairs.
func TestRecoveriesJoinWhatTheObserverSaw(t *testing.T) {
	// In the past, for displacedCount, which measures as of now.
	base := time.Now().Add(-time.Hour)
	at := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
	obs := newObserver()
	obs.pods = map[string]*podTimes{
		"default/web-1/u1": {owner: "default/web", nodeName: "spot-a", running: at(-100), deleted: at(20)},
		"default/web-2/u2": {owner: "default/web", nodeName: "spot-a", running: at(-100)}, // killed
		"default/db-1/u3":  {owner: "default/db", nodeName: "sick", running: at(-100), deleted: at(90)},
		// Replacements: web's on a node started from standby, db's on a cold one.
		"default/web-3/u4": {owner: "default/web", nodeName: "warm", running: at(25)},
		"default/web-4/u5": {owner: "default/web", nodeName: "warm", running: at(27)},
		"default/db-2/u6":  {owner: "default/db", nodeName: "fresh", running: at(150)},
	}
	obs.registrations = map[string][]nodeRegistration{
		"warm":  {{at: time.Time{}, providerID: "fake:///fake-1a/i-warm"}},
		"fresh": {{at: at(120), providerID: "fake:///fake-1b/i-fresh"}},
	}
	r := &run{
		scale:    2,
		observer: obs,
		cloud:    startsOnly{starts: []startCall{{at: at(12), ids: []string{"i-warm"}}}},
		displacements: []displacement{
			{instanceID: "i-spot", node: "spot-a", at: at(10), endsAt: at(70), pods: []string{"default/web-1/u1", "default/web-2/u2"}},
			{instanceID: "i-sick", node: "sick", at: at(30), pods: []string{"default/db-1/u3"}, repair: true},
		},
	}
	interruptions, repairs := r.recoveries(at(200))
	if interruptions == nil || repairs == nil {
		t.Fatalf("interruptions %v, repairs %v: want both", interruptions, repairs)
	}
	want := report.Interruptions{Instances: 1, PodsKilled: 1, Recovery: report.Recovery{
		PodsDisplaced: 2, PodsReplaced: 2, Replacements: report.ReplacementPaths{Standby: 2},
		// (25-10)*2 and (27-10)*2 scenario seconds.
		Seconds: []float64{30, 34},
	}}
	want.RecoverySeconds = report.Percentiles(want.Seconds)
	if got := *interruptions; got.Instances != want.Instances || got.PodsKilled != want.PodsKilled ||
		got.PodsDisplaced != 2 || got.PodsReplaced != 2 || got.Replacements != want.Replacements || got.RecoverySeconds != want.RecoverySeconds {
		t.Errorf("interruptions %+v, want %+v", got, want)
	}
	if repairs.Nodes != 1 || repairs.PodsReplaced != 1 || repairs.Replacements.Cold != 1 || repairs.RecoverySeconds.Max != 240 {
		t.Errorf("repairs %+v: want one node, its pod replaced cold 240 scenario seconds later", repairs)
	}
	if n := r.displacedCount("podsAwaitingReplacement"); n != 0 {
		t.Errorf("podsAwaitingReplacement %d, want 0", n)
	}
}

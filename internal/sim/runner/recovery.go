package runner

import (
	"math"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/report"
)

// recoveries measures, as of now, how the pods displaced by interrupt steps and by
// unhealthy steps were replaced (report.MatchReplacements), from what the observer saw
// of the workload pods, the Nodes and the start calls. Nil when the scenario displaced
// nothing of the kind.
func (r *run) recoveries(now time.Time) (*report.Interruptions, *report.Repairs) {
	displacements := r.displacementsSoFar()
	if len(displacements) == 0 {
		return nil, nil
	}
	pods := r.observer.podTimesByKey()
	registrations, starts := r.observer.nodeRegistrations(), startsByInstance(r.cloud.startCalls())
	var arrivals []report.Arrival
	for _, t := range pods {
		if t.running.IsZero() {
			continue
		}
		a := report.Arrival{Owner: t.owner, Node: t.nodeName, Ready: t.running}
		if node, ok := registrationServing(registrations[t.nodeName], t.running); ok {
			a.NodeRegistered = node.at
			a.NodeStarted, _ = lastAtOrBefore(starts[instanceOf(node.providerID)], t.running)
		}
		arrivals = append(arrivals, a)
	}
	var interrupted, repaired []report.Displacement
	for _, d := range displacements {
		rd := report.Displacement{At: d.at, EndsAt: d.endsAt, Node: d.node}
		for _, key := range d.pods {
			t := pods[key]
			rd.Pods = append(rd.Pods, report.DisplacedPod{Owner: t.owner, Deleted: t.deleted})
		}
		if d.repair {
			repaired = append(repaired, rd)
		} else {
			interrupted = append(interrupted, rd)
		}
	}
	var (
		interruptions *report.Interruptions
		repairs       *report.Repairs
	)
	if len(interrupted) > 0 {
		rec, killed := report.MatchReplacements(interrupted, arrivals, r.scale, now)
		interruptions = &report.Interruptions{Instances: len(interrupted), Recovery: rec, PodsKilled: killed}
	}
	if len(repaired) > 0 {
		rec, _ := report.MatchReplacements(repaired, arrivals, r.scale, now)
		repairs = &report.Repairs{Nodes: len(repaired), Recovery: rec}
	}
	return interruptions, repairs
}

// displacedCount is one of the displacement counts of the conditions, as of now.
func (r *run) displacedCount(name string) int {
	interruptions, repairs := r.recoveries(time.Now())
	var all report.Recovery
	killed := 0
	for _, rec := range []*report.Recovery{recoveryOf(interruptions), recoveryOfRepairs(repairs)} {
		if rec != nil {
			all.PodsDisplaced += rec.PodsDisplaced
			all.PodsReplaced += rec.PodsReplaced
		}
	}
	if interruptions != nil {
		killed = interruptions.PodsKilled
	}
	switch name {
	case "podsDisplaced":
		return all.PodsDisplaced
	case "podsAwaitingReplacement":
		return all.PodsDisplaced - all.PodsReplaced
	case "podsKilledByInterruption":
		return killed
	case "interruptionRecoveryP99":
		return roundedUp(recoveryOf(interruptions), 99)
	case "interruptionRecoveryMax":
		return roundedUp(recoveryOf(interruptions), 100)
	case "repairRecoveryMax":
		return roundedUp(recoveryOfRepairs(repairs), 100)
	}
	return 0
}

func recoveryOf(in *report.Interruptions) *report.Recovery {
	if in == nil {
		return nil
	}
	return &in.Recovery
}

func recoveryOfRepairs(rep *report.Repairs) *report.Recovery {
	if rep == nil {
		return nil
	}
	return &rep.Recovery
}

// roundedUp is a percentile of the recovery times (100: the maximum), in scenario
// seconds rounded up; 0 when nothing was replaced.
func roundedUp(rec *report.Recovery, q float64) int {
	if rec == nil || len(rec.Seconds) == 0 {
		return 0
	}
	if q >= 100 {
		return int(math.Ceil(rec.RecoverySeconds.Max))
	}
	return int(math.Ceil(rec.RecoverySeconds.P99))
}

package nodepool

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// failedClaim is a claim the lifecycle controller removed for its warmup timeout at at.
func failedClaim(name string, at time.Time) v1beta1.NodeClaim {
	c := v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, DeletionTimestamp: &metav1.Time{Time: at}}}
	c.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionWarmedUp, Status: metav1.ConditionFalse,
		Reason: nodeclaim.ReasonWarmupTimeout, Message: "images not pulled: registry.example/typo:1", LastTransitionTime: metav1.NewTime(at)}}
	return c
}

func warmClaim(name string, at time.Time) v1beta1.NodeClaim {
	c := v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionWarmedUp, Status: metav1.ConditionTrue,
		Reason: nodeclaim.ReasonWarmedUp, LastTransitionTime: metav1.NewTime(at)}}
	return c
}

func record(claims []v1beta1.NodeClaim, gone ...warmupFailure) failureRecord {
	return failureRecord{poolGeneration: 1, classGeneration: 1, claims: claims, gone: gone, base: 30 * time.Second, ceiling: 30 * time.Minute}
}

// The wait doubles at each failure in a row and stops at the cap.
func TestBackoffDelayDoublesUpToItsCap(t *testing.T) {
	for failures, want := range map[int32]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 7: 30 * time.Minute, 40: 30 * time.Minute} {
		if got := backoffDelay(failures, 30*time.Second, 30*time.Minute); got != want {
			t.Errorf("after %d failures: %s, want %s", failures, got, want)
		}
	}
}

// Each failed claim counts once: seen terminating over several passes, seen gone after
// it was counted, or only seen gone.
func TestEachFailedClaimCountsOnce(t *testing.T) {
	rec, counted := noteFailures(nil, record([]v1beta1.NodeClaim{failedClaim("a", t0), failedClaim("b", t0)}), t0)
	if len(counted) != 2 || rec.Count != 2 || rec.Reason != nodeclaim.ReasonWarmupTimeout {
		t.Fatalf("first pass: counted %d, record %+v; want 2 WarmupTimeout", len(counted), rec)
	}
	if want := t0.Add(time.Minute); !rec.RetryAfter.Time.Equal(want) {
		t.Errorf("retry after %s, want %s (two failures: 30s doubled)", rec.RetryAfter.Time, want)
	}
	// The same claims again, and a's deletion seen: nothing new.
	// The same claims again: nothing new.
	rec, counted = noteFailures(rec, record([]v1beta1.NodeClaim{failedClaim("a", t0), failedClaim("b", t0)}), t0.Add(time.Second))
	if len(counted) != 0 || rec.Count != 2 {
		t.Errorf("counted %v again, count %d; want nothing new", counted, rec.Count)
	}
	// a's deletion seen while it is still listed (the cache lags the event): not again.
	rec, counted = noteFailures(rec, record([]v1beta1.NodeClaim{failedClaim("a", t0), failedClaim("b", t0)}, warmupFailure{claim: "a", reason: nodeclaim.ReasonWarmupTimeout}), t0.Add(2*time.Second))
	if len(counted) != 0 {
		t.Errorf("a counted again at its deletion: %v", counted)
	}
	// c failed and went between two passes: its deletion counts it.
	rec, counted = noteFailures(rec, record(nil, warmupFailure{claim: "c", reason: nodeclaim.ReasonRegistrationTimeout, message: "No Node registered"}), t0.Add(3*time.Second))
	if len(counted) != 1 || rec.Reason != nodeclaim.ReasonRegistrationTimeout || len(rec.Counted) != 0 {
		t.Errorf("counted %v, record %+v; want c alone, RegistrationTimeout, and no name kept", counted, rec)
	}
}

// A claim that warms up after the last failure, or a change of the pool's or the
// class's spec, ends the backoff; the names counted stay, so that the old failed claims
// still terminating are not counted against the new spec.
func TestASuccessOrASpecChangeEndsTheBackoff(t *testing.T) {
	failing := []v1beta1.NodeClaim{failedClaim("a", t0)}
	rec, _ := noteFailures(nil, record(failing), t0)

	if after, _ := noteFailures(rec, record(append(failing, warmClaim("w", t0.Add(-time.Minute)))), t0.Add(time.Second)); !backingOff(after) {
		t.Error("a claim warmed up before the failure ended the backoff")
	}
	after, _ := noteFailures(rec, record(append(failing, warmClaim("w", t0.Add(time.Minute)))), t0.Add(time.Minute))
	if backingOff(after) || after == nil || len(after.Counted) != 1 {
		t.Errorf("after a success: %+v; want no backoff, a still counted", after)
	}
	changed := record(failing)
	changed.poolGeneration = 2
	after, counted := noteFailures(rec, changed, t0.Add(time.Second))
	if backingOff(after) || len(counted) != 0 {
		t.Errorf("after a spec change: %+v, counted %v; want no backoff and a not counted again", after, counted)
	}
	if after, _ := noteFailures(after, record(nil), t0.Add(2*time.Second)); after != nil {
		t.Errorf("nothing failed and nothing to remember: %+v, want no record", after)
	}
}

// A claim stopped as it was at its warmup timeout, or removed for another reason, is no
// failure of warm-up.
func TestOnlyClaimsRemovedForAFailedWarmupOrRegistrationCount(t *testing.T) {
	stopped := failedClaim("stopped", t0)
	stopped.DeletionTimestamp = nil
	excess := v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "excess", DeletionTimestamp: &metav1.Time{Time: t0}}}
	if rec, counted := noteFailures(nil, record([]v1beta1.NodeClaim{stopped, excess}), t0); rec != nil || len(counted) != 0 {
		t.Errorf("record %+v, counted %v; want none", rec, counted)
	}
}

// A backing-off pool creates no standby claim before its retry time, then one while no
// other warms up.
func TestABackingOffPoolWarmsOneAtATime(t *testing.T) {
	rec := &v1beta1.WarmupFailures{Count: 3, RetryAfter: metav1.NewTime(t0.Add(time.Minute))}
	if got := standbyCap(rec, nil, t0); got == nil || *got != 0 {
		t.Errorf("before the retry time: %v, want 0", got)
	}
	if got := standbyCap(rec, nil, t0.Add(time.Minute)); got == nil || *got != 1 {
		t.Errorf("at the retry time: %v, want 1", got)
	}
	warming := []member{{name: "probe", standby: true}}
	if got := standbyCap(rec, warming, t0.Add(time.Minute)); got == nil || *got != 0 {
		t.Errorf("while a probe warms up: %v, want 0", got)
	}
	if got := standbyCap(nil, warming, t0); got != nil {
		t.Errorf("without failures: %v, want no bound", *got)
	}
	p := planWith(goal{target: 5, ceiling: 5, standbyAtMost: standbyCap(rec, nil, t0.Add(time.Minute))}, nil, nil, nil)
	if p.create != 1 || p.throttled {
		t.Errorf("plan creates %d (throttled %v), want 1 probe, not counted as throttled", p.create, p.throttled)
	}
}

// A pool creates at most its allowance per pass, launches for a running minimum first.
func TestCreationsPerPassAreBounded(t *testing.T) {
	allowed := 20
	p := planWith(goal{target: 10000, ceiling: 10000, minRunning: 5, newAtMost: &allowed}, nil, nil, nil)
	if p.launch != 5 || p.create != 15 || !p.throttled {
		t.Errorf("launch %d, create %d, throttled %v; want 5, 15, true", p.launch, p.create, p.throttled)
	}
}

// A claim removed because the cloud ended its instance at launch counts as a failure of
// the pool, as a failed warm-up does: every launch of the pool ends the same way.
func TestAClaimEndedAtLaunchCounts(t *testing.T) {
	ended := v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "ended", DeletionTimestamp: &metav1.Time{Time: t0}}}
	ended.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionLaunched, Status: metav1.ConditionFalse,
		Reason: nodeclaim.ReasonEndedAtLaunch, Message: "the instance ended at launch: Client.InternalError", LastTransitionTime: metav1.NewTime(t0)}}
	got, ok := failureOf(&ended)
	if !ok || got.reason != nodeclaim.ReasonEndedAtLaunch || got.claim != "ended" {
		t.Fatalf("failureOf = %+v, %v; want the claim counted with reason %s", got, ok, nodeclaim.ReasonEndedAtLaunch)
	}
}

package nodepool

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// ReasonWarmupFailing: the pool's claims keep failing to warm up or to register, and it
// backs off from making standby claims.
const ReasonWarmupFailing = "WarmupFailing"

// Defaults of the warm-up backoff: the wait after the first failure, doubled at each
// failure after it, up to the cap.
const (
	DefaultWarmupBackoff    = 30 * time.Second
	DefaultWarmupBackoffMax = 30 * time.Minute
)

// warmupFailure is what a failed claim says of its failure.
type warmupFailure struct {
	claim, reason, message string
	at                     time.Time
}

// failureOf reports how a claim failed to warm up or to register, if it did: the
// lifecycle controller removed it for its warmup timeout (terminate), its registration
// timeout, or an instance the cloud ended at launch (an unusable KMS key: each launch
// of the pool would end the same way), and says why on its conditions. A claim stopped as it is (timeoutAction
// stop) churns nothing and is no failure here.
func failureOf(claim *v1beta1.NodeClaim) (warmupFailure, bool) {
	if claim.DeletionTimestamp.IsZero() {
		return warmupFailure{}, false
	}
	for _, check := range []struct{ condition, reason string }{
		{v1beta1.ConditionRegistered, nodeclaim.ReasonRegistrationTimeout},
		{v1beta1.ConditionWarmedUp, nodeclaim.ReasonWarmupTimeout},
		{v1beta1.ConditionLaunched, nodeclaim.ReasonEndedAtLaunch},
	} {
		c := meta.FindStatusCondition(claim.Status.Conditions, check.condition)
		if c != nil && c.Status == metav1.ConditionFalse && c.Reason == check.reason {
			return warmupFailure{claim: claim.Name, reason: c.Reason, message: c.Message, at: c.LastTransitionTime.Time}, true
		}
	}
	return warmupFailure{}, false
}

// warmedUpSince reports whether a claim of the pool finished a warm-up at or after t.
func warmedUpSince(claims []v1beta1.NodeClaim, t time.Time) bool {
	for i := range claims {
		c := meta.FindStatusCondition(claims[i].Status.Conditions, v1beta1.ConditionWarmedUp)
		if c != nil && c.Status == metav1.ConditionTrue && !c.LastTransitionTime.Time.Before(t.Truncate(time.Second)) {
			return true
		}
	}
	return false
}

// backoffDelay is how long a pool waits after its nth failure in a row: base, doubled
// at each further failure, capped at ceiling.
func backoffDelay(failures int32, base, ceiling time.Duration) time.Duration {
	b := wait.Backoff{Duration: base, Factor: 2, Steps: math.MaxInt32, Cap: ceiling}
	var d time.Duration
	for range failures {
		d = b.Step()
	}
	return d
}

// failureRecord is what the pool must know to update its record: its spec's generation
// and its node class's, its claims, the failed claims seen gone since the last pass, and
// the backoff's bounds.
type failureRecord struct {
	poolGeneration, classGeneration int64
	claims                          []v1beta1.NodeClaim
	gone                            []warmupFailure
	base, ceiling                   time.Duration
}

// noteFailures brings a pool's record of failed warm-ups up to date and returns it with
// the failures it counted now. A success (a claim warmed up since the last failure) or a
// change of the pool's or the class's spec starts afresh; the names of the failed
// claims counted are kept while the claims exist, so that none counts twice, whatever
// restarts in between.
func noteFailures(rec *v1beta1.WarmupFailures, in failureRecord, now time.Time) (*v1beta1.WarmupFailures, []warmupFailure) {
	if rec == nil {
		rec = &v1beta1.WarmupFailures{}
	} else {
		rec = rec.DeepCopy()
	}
	if rec.PoolGeneration != in.poolGeneration || rec.NodeClassGeneration != in.classGeneration ||
		rec.Count > 0 && warmedUpSince(in.claims, rec.LastFailureTime.Time) {
		*rec = v1beta1.WarmupFailures{Counted: rec.Counted}
	}
	rec.PoolGeneration, rec.NodeClassGeneration = in.poolGeneration, in.classGeneration

	listed := map[string]bool{}
	var failed []warmupFailure
	for i := range in.claims {
		listed[in.claims[i].Name] = true
		if f, ok := failureOf(&in.claims[i]); ok {
			failed = append(failed, f)
		}
	}
	failed = append(failed, in.gone...)
	var counted []warmupFailure
	for _, f := range failed {
		if slices.Contains(rec.Counted, f.claim) || slices.ContainsFunc(counted, func(c warmupFailure) bool { return c.claim == f.claim }) {
			continue
		}
		counted = append(counted, f)
	}
	// A claim gone from the list can never be seen again: its name is not needed.
	rec.Counted = slices.DeleteFunc(rec.Counted, func(name string) bool { return !listed[name] })
	for _, f := range counted {
		if listed[f.claim] {
			rec.Counted = append(rec.Counted, f.claim)
		}
	}
	slices.Sort(rec.Counted)
	if len(counted) > 0 {
		last := slices.MaxFunc(counted, func(a, b warmupFailure) int { return a.at.Compare(b.at) })
		rec.Count += int32(len(counted))
		rec.Reason = last.reason
		rec.Message = fmt.Sprintf("claim %s: %s", last.claim, last.message)
		rec.LastFailureTime = metav1.NewTime(now)
		rec.RetryAfter = metav1.NewTime(now.Add(backoffDelay(rec.Count, in.base, in.ceiling)))
	}
	if rec.Count == 0 && len(rec.Counted) == 0 {
		return nil, counted
	}
	return rec, counted
}

// backingOff reports whether the record holds the pool's standby creations back.
func backingOff(rec *v1beta1.WarmupFailures) bool { return rec != nil && rec.Count > 0 }

// standbyCap is how many standby claims a backing-off pool may create now: none before
// its retry time, then one at a time, while no other fresh standby claim warms up.
// nil means no bound.
func standbyCap(rec *v1beta1.WarmupFailures, members []member, now time.Time) *int {
	if !backingOff(rec) {
		return nil
	}
	none, one := 0, 1
	if now.Before(rec.RetryAfter.Time) {
		return &none
	}
	for _, m := range members {
		if m.standby && !m.ready && !m.deleting && m.stale == "" && !m.held {
			return &none
		}
	}
	return &one
}

// failureMessage is the Degraded condition's account of a backing-off pool.
func failureMessage(rec *v1beta1.WarmupFailures) string {
	return fmt.Sprintf("%d standby nodes in a row failed to warm up (%s); the last, %s; the pool warms one at a time, the next not before %s",
		rec.Count, rec.Reason, rec.Message, rec.RetryAfter.UTC().Format(time.RFC3339))
}

// goneFailures keeps the failed claims seen deleted between two passes over their pool:
// a claim whose instance terminates fast may be gone before a pass lists it.
type goneFailures struct {
	mu     sync.Mutex
	byPool map[string][]warmupFailure
}

func (g *goneFailures) add(pool string, f warmupFailure) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byPool == nil {
		g.byPool = map[string][]warmupFailure{}
	}
	g.byPool[pool] = append(g.byPool[pool], f)
}

// take returns and forgets the pool's failed claims seen gone.
func (g *goneFailures) take(pool string) []warmupFailure {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.byPool[pool]
	delete(g.byPool, pool)
	return out
}

// countFailures adds the failures counted to the metric.
func countFailures(pool string, counted []warmupFailure) {
	for _, f := range counted {
		metrics.PoolWarmupFailures.WithLabelValues(pool, f.reason).Inc()
	}
}

// recordBackoff sets how long the pool still waits before it makes a standby claim.
func recordBackoff(pool *v1beta1.NodePool, now time.Time) {
	wait := time.Duration(0)
	if rec := pool.Status.WarmupFailures; backingOff(rec) {
		wait = max(rec.RetryAfter.Sub(now), 0)
	}
	metrics.PoolWarmupBackoff.WithLabelValues(pool.Name).Set(wait.Seconds())
}

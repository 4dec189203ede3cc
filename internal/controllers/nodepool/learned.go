package nodepool

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/forecast"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/windows"
)

// ReasonLearnedTargetChanged: a learned pool's target, or the nodes it runs ahead of a
// peak, changed.
const ReasonLearnedTargetChanged = "LearnedTargetChanged"

// DefaultWarmup is the warm-up duration a learned pool assumes until one of its claims
// has warmed up.
const DefaultWarmup = 3 * time.Minute

// warmupsMeasured is how many of the pool's latest warm-ups its lead is measured on.
const warmupsMeasured = 20

// learn raises the targets by a learned warm pool's forecast and sets status.learned:
// the warm pool becomes the larger of the window's (or spec's) target and the forecast
// within standby.min, standby.max and limits.nodes; with preStart, a confident peak
// about to come raises the running minimum to its forecast, and the nodes run ahead are
// taken off the warm pool's (they serve the peak, no need to stand more by for it). A pool that does not learn
// loses status.learned. It returns when to look again on the calendar: when the
// intervals ahead change, and, while nodes run ahead of a peak, a few times an interval
// to see which of them serve pods; zero when the pool does not learn.
func (r *Reconciler) learn(ctx context.Context, pool *v1beta1.NodePool, claims []v1beta1.NodeClaim, targets *windows.Targets) (time.Time, error) {
	learned := pool.Spec.Standby.Learned
	if learned == nil {
		pool.Status.Learned = nil
		forgetLearned(pool.Name)
		return time.Time{}, nil
	}
	previous := pool.Status.Learned.DeepCopy()
	now := windows.Calendar(r.Calendar, r.Clock).Now()
	s, err := forecast.SettingsOf(learned)
	if err != nil {
		pool.Status.Learned = &v1beta1.LearnedStatus{Target: pool.Spec.Standby.Min, Message: fmt.Sprintf("nothing is learned: %v", err)}
		keepChangeTime(pool.Status.Learned, previous, now)
		return time.Time{}, nil
	}
	history, err := r.history(ctx, pool, s)
	if err != nil {
		return time.Time{}, err
	}
	lead := r.warmup(claims)
	preStart := forecast.PreStartOf(learned)
	o := forecast.Look(history, s, now, lead, preStart)
	if preStart != nil {
		if err := r.notePreStart(ctx, pool, claims, o, s.Interval, now); err != nil {
			return time.Time{}, err
		}
	}

	running := o.Running
	if targets.MaxNodes != nil {
		running = min(running, *targets.MaxNodes)
	}
	// Nodes run ahead of the peak serve it: the warm pool need not stand them by again.
	target := max(o.Forecast-running, pool.Spec.Standby.Min)
	if pool.Spec.Standby.Max != nil {
		target = min(target, max(*pool.Spec.Standby.Max, pool.Spec.Standby.Min))
	}
	if targets.MaxNodes != nil {
		target = min(target, *targets.MaxNodes)
	}
	targets.MinStandby = max(targets.MinStandby, target)
	targets.MaxStandby = max(targets.MaxStandby, targets.MinStandby)
	targets.MinRunning = max(targets.MinRunning, running)
	next := o.Next
	if running > 0 || (previous != nil && previous.Running > 0) {
		if soon := now.Add(s.Interval / 3); soon.Before(next) {
			next = soon
		}
	}

	pool.Status.Learned = &v1beta1.LearnedStatus{
		Target: target, Forecast: o.Forecast, Running: running, Bucket: o.Bucket, Percentile: s.Percentile, Days: o.Days,
		Lead: &v1beta1.Duration{Duration: lead}, Message: o.Explain(s),
	}
	keepChangeTime(pool.Status.Learned, previous, now)
	was, wasRunning := pool.Spec.Standby.Min, int32(0)
	if previous != nil {
		was, wasRunning = previous.Target, previous.Running
	}
	if r.learnedNotes.changed(pool.Name, [2]int32{was, wasRunning}, [2]int32{target, running}) {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, ReasonLearnedTargetChanged, "Scale",
			"Learned warm-pool target %d (was %d), %d running ahead of the peak, for %s: %s", target, was, running, o.Bucket, o.Explain(s))
	}
	metrics.PoolForecastNodes.WithLabelValues(pool.Name).Set(float64(o.Forecast))
	metrics.PoolLearnedStandbyTarget.WithLabelValues(pool.Name).Set(float64(target))
	metrics.PoolLearnedPreStartNodes.WithLabelValues(pool.Name).Set(float64(running))
	return next, nil
}

// keepChangeTime carries the last change's time over from previous, or sets it to now
// (on the calendar, as the bucket is) when the target or the running nodes changed.
func keepChangeTime(status, previous *v1beta1.LearnedStatus, now time.Time) {
	if previous != nil && previous.Target == status.Target && previous.Running == status.Running && previous.LastChangeTime != nil {
		status.LastChangeTime = previous.LastChangeTime
		return
	}
	status.LastChangeTime = &metav1.Time{Time: now.Truncate(time.Second)}
}

// history is the pool's recorded demand: empty when there is none yet, when the
// NodePoolDemand of that name belongs to another pool, or when it was kept in another
// interval or time zone (the recorder starts it anew).
func (r *Reconciler) history(ctx context.Context, pool *v1beta1.NodePool, s forecast.Settings) (*v1beta1.NodePoolDemandSpec, error) {
	d := &v1beta1.NodePoolDemand{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: pool.Name}, d); err != nil {
		if apierrors.IsNotFound(err) {
			return &v1beta1.NodePoolDemandSpec{}, nil
		}
		return nil, err
	}
	owned := slices.ContainsFunc(d.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == pool.UID })
	if !owned || d.Spec.Interval.Duration != s.Interval || d.Spec.TimeZone != s.Location.String() {
		return &v1beta1.NodePoolDemandSpec{}, nil
	}
	return &d.Spec, nil
}

// warmup is the pool's warm-up duration on the calendar: the 90th percentile of its
// latest claims' times from creation to warmed up, DefaultWarmup when none has warmed up.
// The times are measured on the real clock; a calendar that runs faster (the
// simulator's time scale) stretches them by its rate.
func (r *Reconciler) warmup(claims []v1beta1.NodeClaim) time.Duration {
	type sample struct {
		at   time.Time
		took time.Duration
	}
	var samples []sample
	for i := range claims {
		c := meta.FindStatusCondition(claims[i].Status.Conditions, v1beta1.ConditionWarmedUp)
		if c == nil || c.Status != metav1.ConditionTrue {
			continue
		}
		if took := c.LastTransitionTime.Sub(claims[i].CreationTimestamp.Time); took > 0 {
			samples = append(samples, sample{at: c.LastTransitionTime.Time, took: took})
		}
	}
	if len(samples) == 0 {
		return DefaultWarmup
	}
	slices.SortFunc(samples, func(a, b sample) int { return b.at.Compare(a.at) })
	samples = samples[:min(len(samples), warmupsMeasured)]
	took := make([]time.Duration, len(samples))
	for i, s := range samples {
		took[i] = s.took
	}
	slices.Sort(took)
	p90 := took[(len(took)*9+9)/10-1]
	return time.Duration(float64(p90) * r.calendarRate())
}

// learnedNotes remembers the learned target and running nodes each pool's last Event
// announced: a pass whose status write lost a race runs again on the old status, and
// must not announce the same change twice.
type learnedNotes struct {
	mu   sync.Mutex
	last map[string][2]int32
}

// changed records now as the pool's announced figures and reports whether they differ
// from the last announced, or, when none was in this process, from was (the status).
func (n *learnedNotes) changed(pool string, was, now [2]int32) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.last == nil {
		n.last = map[string][2]int32{}
	}
	if last, ok := n.last[pool]; ok {
		was = last
	}
	n.last[pool] = now
	return was != now
}

func (n *learnedNotes) forget(pool string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.last, pool)
}

// forgetLearned drops a pool's learned series.
func forgetLearned(name string) {
	metrics.PoolForecastNodes.DeleteLabelValues(name)
	metrics.PoolLearnedStandbyTarget.DeleteLabelValues(name)
	metrics.PoolLearnedPreStartNodes.DeleteLabelValues(name)
}

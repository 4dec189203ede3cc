// Package demand records, for each pool with a learned warm pool, how many nodes its
// pending pods needed, per zone and interval of the day, into the pool's NodePoolDemand:
// the history the nodepool controller forecasts from. Provisioning tells it what each
// decision started and launched; it keeps the counts in memory and adds them to the API
// server's copy as an interval ends, and at least every FlushEvery while they grow, so
// that a restart or a new leader loses at most that much.
package demand

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/forecast"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/windows"
)

// FlushEvery is the longest the recorder keeps counts that grew in memory.
const FlushEvery = 30 * time.Second

// tick is how often the recorder looks whether an interval ended or FlushEvery passed.
const tick = time.Second

// +kubebuilder:rbac:groups=stratos.sh,resources=nodepooldemands,verbs=get;list;watch;create;update;patch

// Recorder keeps the demand of learned pools. Only the leader records: it is started by
// the manager with leader election, and provisioning, which calls Record, runs only on
// the leader too.
type Recorder struct {
	Client client.Client
	// Reader reads NodePoolDemands uncached, so that an update starts from the API
	// server's copy (the manager's API reader).
	Reader client.Reader
	// Clock times FlushEvery; Calendar is the clock the days are read on (nil is Clock).
	Clock    clock.PassiveClock
	Calendar clock.PassiveClock

	mu      sync.Mutex
	pending map[string]*pending
	// served is, by pool, the most pre-started nodes seen busy in each interval (see
	// RecordServed).
	served map[string]map[forecast.Key]int32
}

// pending is a pool's demand not written yet.
type pending struct {
	uid      string
	settings forecast.Settings
	counts   map[forecast.Key]int32
	since    time.Time
}

// NeedLeaderElection is true: the leader records, as it is the one that provisions.
func (r *Recorder) NeedLeaderElection() bool { return true }

// Record counts nodes needed at the calendar time at by the pool's pending pods in zone.
// A pool without a learned warm pool, or whose settings cannot be read, is not recorded.
func (r *Recorder) Record(pool *v1beta1.NodePool, at time.Time, zone string, nodes int32) {
	if r == nil || pool.Spec.Standby.Learned == nil || nodes <= 0 {
		return
	}
	s, err := forecast.SettingsOf(pool.Spec.Standby.Learned)
	if err != nil {
		return // the pool's status says why it learns nothing
	}
	key := s.KeyAt(at, zone)
	metrics.PoolDemandNodes.WithLabelValues(pool.Name, zone).Add(float64(nodes))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[string]*pending{}
	}
	p := r.pending[pool.Name]
	if p == nil || p.uid != string(pool.UID) || p.settings.Clock != s.Clock {
		// A pool made anew, or whose interval or time zone changed, starts afresh: counts
		// under other settings would land in the wrong intervals.
		p = &pending{uid: string(pool.UID), settings: s, counts: map[forecast.Key]int32{}, since: r.Clock.Now()}
		r.pending[pool.Name] = p
	}
	p.settings = s // the latest half-life sets how much history is kept
	p.counts[key] += nodes
}

// RecordServed notes that nodes pre-started ahead of the interval that holds at, in
// zone, serve pods: pods that landed on them needed no start or launch, so provisioning
// saw no demand, yet it was there. The nodepool controller reports the count at each
// look; the most seen in an interval is its demand (added to what provisioning
// counted). Without it, a pre-started peak would record none and be forgotten.
func (r *Recorder) RecordServed(pool *v1beta1.NodePool, at time.Time, zone string, nodes int32) {
	if r == nil || pool.Spec.Standby.Learned == nil || nodes <= 0 {
		return
	}
	s, err := forecast.SettingsOf(pool.Spec.Standby.Learned)
	if err != nil {
		return
	}
	key := s.KeyAt(at, zone)
	r.mu.Lock()
	if r.served == nil {
		r.served = map[string]map[forecast.Key]int32{}
	}
	seen := r.served[pool.Name]
	if seen == nil {
		seen = map[forecast.Key]int32{}
		r.served[pool.Name] = seen
	}
	delta := nodes - seen[key]
	if delta > 0 {
		seen[key] = nodes
	}
	// Intervals of days before yesterday are not looked at again.
	if day, err := time.Parse(time.DateOnly, key.Date); err == nil {
		before := day.AddDate(0, 0, -1).Format(time.DateOnly)
		for k := range seen {
			if k.Date < before {
				delete(seen, k)
			}
		}
	}
	r.mu.Unlock()
	if delta > 0 {
		r.Record(pool, at, zone, delta)
	}
}

// Start writes the counts until ctx ends, and once more then.
func (r *Recorder) Start(ctx context.Context) error {
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("demand"))
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			// A last write, so that a clean handover loses nothing; a crash loses at most
			// FlushEvery of counts.
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			r.flush(final, true)
			cancel()
			return nil
		case <-ticker.C:
			r.flush(ctx, false)
		}
	}
}

// flush writes each pool's counts whose interval ended, or that waited FlushEvery; all
// of them when all is set. Counts that fail to be written are kept for the next try.
func (r *Recorder) flush(ctx context.Context, all bool) {
	now := windows.Calendar(r.Calendar, r.Clock).Now()
	r.mu.Lock()
	due := map[string]*pending{}
	for name, p := range r.pending {
		if all || r.Clock.Since(p.since) >= FlushEvery || ended(p, now) {
			due[name] = p
			delete(r.pending, name)
		}
	}
	r.mu.Unlock()
	for name, p := range due {
		if err := r.write(ctx, name, p); err != nil {
			log.FromContext(ctx).Error(err, "Recording the pool's demand failed; it is tried again", "nodepool", name)
			r.putBack(name, p)
		}
	}
}

// ended reports whether some of the counts are of an interval that is over.
func ended(p *pending, now time.Time) bool {
	current := p.settings.KeyAt(now, "")
	for key := range p.counts {
		if key.Date != current.Date || key.Index != current.Index {
			return true
		}
	}
	return false
}

// putBack returns counts that were not written to those recorded since.
func (r *Recorder) putBack(name string, p *pending) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.pending[name]
	if now == nil {
		r.pending[name] = p
		return
	}
	if now.uid != p.uid || now.settings.Clock != p.settings.Clock {
		return // the pool changed since: those counts are of another history
	}
	for key, n := range p.counts {
		now.counts[key] += n
	}
	now.since = p.since
}

// write adds the counts to the pool's NodePoolDemand, creating it owned by the pool.
func (r *Recorder) write(ctx context.Context, name string, p *pending) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &v1beta1.NodePoolDemand{}
		err := r.Reader.Get(ctx, client.ObjectKey{Name: name}, d)
		switch {
		case apierrors.IsNotFound(err):
			pool := &v1beta1.NodePool{}
			if err := r.Reader.Get(ctx, client.ObjectKey{Name: name}, pool); err != nil {
				return client.IgnoreNotFound(err) // a pool gone takes its demand with it
			}
			if string(pool.UID) != p.uid {
				return nil // another pool of that name: the counts were the old one's
			}
			d = &v1beta1.NodePoolDemand{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if err := controllerutil.SetControllerReference(pool, d, r.Client.Scheme()); err != nil {
				return err
			}
			apply(d, p)
			return r.Client.Create(ctx, d)
		case err != nil:
			return err
		}
		if !ownedBy(d, p.uid) {
			return fmt.Errorf("NodePoolDemand %s is not owned by the pool of that name", name)
		}
		apply(d, p)
		return r.Client.Update(ctx, d)
	})
}

// ownedBy reports whether the pool of uid owns d.
func ownedBy(d *v1beta1.NodePoolDemand, uid string) bool {
	for _, ref := range d.OwnerReferences {
		if string(ref.UID) == uid {
			return true
		}
	}
	return false
}

// apply adds the counts to the history, anew when it was kept in another interval or
// time zone, and drops the days it no longer keeps.
func apply(d *v1beta1.NodePoolDemand, p *pending) {
	zone := p.settings.Location.String()
	if d.Spec.Interval.Duration != p.settings.Interval || d.Spec.TimeZone != zone {
		d.Spec = v1beta1.NodePoolDemandSpec{Interval: v1beta1.Duration{Duration: p.settings.Interval}, TimeZone: zone}
	}
	latest := ""
	for key, n := range p.counts {
		forecast.Add(&d.Spec, key, n)
		latest = max(latest, key.Date)
	}
	forecast.Compact(&d.Spec, latest, forecast.Keeping(p.settings.HalfLife))
}

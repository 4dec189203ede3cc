package nodepool

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/forecast"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/podutil"
)

// ServedRecorder takes the nodes a learned pool pre-started that serve pods (see
// demand.Recorder.RecordServed).
type ServedRecorder interface {
	RecordServed(pool *v1beta1.NodePool, at time.Time, zone string, nodes int32)
}

// preStarts remembers, per pool, the standby claims a pre-start may start and those it
// started: pods landing on a pre-started node need no start or launch, so provisioning
// never sees their demand, and a peak served that way must still be recorded, or the
// pool would forget it and stop pre-starting. Kept in memory: a restart during a peak
// loses at most that peak's count of pre-started nodes.
type preStarts struct {
	mu     sync.Mutex
	byPool map[string]*preStart
}

// preStart is one pre-start of a pool: for the slot beginning at slot, the claims that
// stood by as it began, and those of them asked to run before the slot began.
type preStart struct {
	slot    forecast.Slot
	standby map[string]bool
	started map[string]bool
}

// notePreStart follows the pool's pre-start for the peak o runs nodes for, and reports
// the pre-started nodes serving pods, by zone, during the slot and one interval after
// (pods that came at the slot's end still ran then).
func (r *Reconciler) notePreStart(ctx context.Context, pool *v1beta1.NodePool, claims []v1beta1.NodeClaim, o forecast.Outlook, interval time.Duration, now time.Time) error {
	r.preStarts.mu.Lock()
	if r.preStarts.byPool == nil {
		r.preStarts.byPool = map[string]*preStart{}
	}
	p := r.preStarts.byPool[pool.Name]
	if o.Running > 0 && now.Before(o.RunningFor.Start) && (p == nil || !p.slot.Start.Equal(o.RunningFor.Start)) {
		// The pre-start begins: the claims standing by now are the ones it may start.
		p = &preStart{slot: o.RunningFor, standby: map[string]bool{}, started: map[string]bool{}}
		for i := range claims {
			if claims[i].Spec.DesiredState == v1beta1.DesiredStandby {
				p.standby[claims[i].Name] = true
			}
		}
		r.preStarts.byPool[pool.Name] = p
	}
	if p != nil && !now.Before(p.slot.End.Add(interval)) {
		delete(r.preStarts.byPool, pool.Name)
		p = nil
	}
	var started []*v1beta1.NodeClaim
	if p != nil {
		for i := range claims {
			c := &claims[i]
			if p.standby[c.Name] && c.Spec.DesiredState == v1beta1.DesiredRunning && now.Before(p.slot.Start) {
				// Asked to run before the slot began: pre-started, not started by
				// provisioning for the slot's pods (which it counts itself).
				p.started[c.Name] = true
			}
			if p.started[c.Name] {
				started = append(started, c)
			}
		}
	}
	r.preStarts.mu.Unlock()
	if p == nil || now.Before(p.slot.Start) || r.Served == nil {
		return nil
	}
	byZone := map[string]int32{}
	for _, c := range started {
		if c.Status.Phase != v1beta1.PhaseRunning || c.Status.NodeName == "" || !c.DeletionTimestamp.IsZero() {
			continue
		}
		busy, err := r.runsPods(ctx, c.Status.NodeName)
		if err != nil {
			return err
		}
		if busy {
			byZone[claimZone(c)]++
		}
	}
	for zone, n := range byZone {
		r.Served.RecordServed(pool, p.slot.Start, zone, n)
	}
	return nil
}

// forget drops a pool's pre-start.
func (p *preStarts) forget(pool string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.byPool, pool)
}

// runsPods reports whether a workload pod runs on the node: not a DaemonSet's, a
// mirror, a pre-pull pod (controlled by a NodeClaim) or a finished one.
func (r *Reconciler) runsPods(ctx context.Context, node string) (bool, error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.MatchingFields{indexes.PodNodeName: node}); err != nil {
		return false, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if podutil.OwnedByDaemonSet(p) || podutil.Mirror(p) || podutil.Finished(p) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if owner := metav1.GetControllerOf(p); owner != nil && owner.Kind == "NodeClaim" {
			continue
		}
		return true, nil
	}
	return false, nil
}

// calendarRate is how many times as fast as the real clock the calendar runs: the
// simulator's time scale, 1 for any other calendar.
func (r *Reconciler) calendarRate() float64 {
	if rated, ok := r.Calendar.(interface{ Rate() float64 }); ok {
		return rated.Rate()
	}
	return 1
}

// onRealClock is how long a wait measured on the calendar takes on the real clock.
func (r *Reconciler) onRealClock(wait time.Duration) time.Duration {
	return time.Duration(float64(wait) / r.calendarRate())
}

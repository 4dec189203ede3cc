package windows

import (
	"fmt"
	"time"

	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Calendar is the clock windows are read on: the operator's clock unless one is set.
// Tests and the simulator move it across window boundaries without moving the clock
// that timeouts are measured on.
func Calendar(calendar, fallback clock.PassiveClock) clock.PassiveClock {
	if calendar != nil {
		return calendar
	}
	return fallback
}

// Targets are what a pool aims for at one moment: its spec, with the overrides of the
// window in force.
type Targets struct {
	// Window names the window in force; "" when none is.
	Window string
	// PreWarming names the windows about to open whose raised targets apply already.
	PreWarming []string
	// Next is when a window of the pool next opens or closes; zero when none ever does.
	Next time.Time
	// MinStandby is the warm pool's target, and MaxStandby its ceiling.
	MinStandby, MaxStandby int32
	// MinRunning is how many of the pool's nodes run at least, pods or not.
	MinRunning int32
	// MaxNodes caps the pool's claims; nil is no cap.
	MaxNodes *int32
}

// preWarm raises the targets for the windows that open within their preWarm, and moves
// Next to the moment the next pre-warm begins when that comes first.
func (t *Targets) preWarm(specs []v1beta1.Window, parsed []Window, now time.Time) {
	for i, spec := range specs {
		lead := defaultPreWarm
		if spec.PreWarm != nil {
			lead = spec.PreWarm.Duration
		}
		if lead <= 0 || (spec.MinStandby == nil && spec.MinRunning == nil) {
			continue
		}
		w := parsed[i]
		if !w.Active(now.Add(lead)) {
			// The next pre-warm starts when the window opens lead from then.
			if opens := w.NextChange(now.Add(lead)); !opens.IsZero() {
				if at := opens.Add(-lead); t.Next.IsZero() || at.Before(t.Next) {
					t.Next = at
				}
			}
			continue
		}
		if w.Active(now) {
			continue
		}
		standby, running := ptr.Deref(spec.MinStandby, 0), ptr.Deref(spec.MinRunning, 0)
		if standby <= t.MinStandby && running <= t.MinRunning {
			continue // it would raise nothing
		}
		t.PreWarming = append(t.PreWarming, spec.Name)
		t.MinStandby, t.MinRunning = max(t.MinStandby, standby), max(t.MinRunning, running)
	}
}

// defaultPreWarm applies when a window sets none (the API server defaults it too).
const defaultPreWarm = 10 * time.Minute

// For returns the pool's targets at now. When several windows are active, the one
// declared last wins, whole: its overrides apply and the others' do not. A window about
// to open within its preWarm raises minStandby and minRunning to its own already (the
// highest of those wins), so its nodes have warmed up when it opens. A window that
// cannot be read (a time zone unknown to this binary) is an error, and the spec's
// targets hold.
func For(pool *v1beta1.NodePool, now time.Time) (Targets, error) {
	t := Targets{MinStandby: pool.Spec.Standby.Min, MaxNodes: pool.Spec.Limits.Nodes()}
	parsed := make([]Window, 0, len(pool.Spec.Windows))
	for _, w := range pool.Spec.Windows {
		p, err := Parse(w.Days, w.Hours, string(w.TimeZone))
		if err != nil {
			t.MaxStandby = max(ptr.Deref(pool.Spec.Standby.Max, t.MinStandby), t.MinStandby)
			return t, fmt.Errorf("window %s: %w", w.Name, err)
		}
		parsed = append(parsed, p)
	}
	active, next := Evaluate(parsed, now)
	t.Next = next
	if active >= 0 {
		w := pool.Spec.Windows[active]
		t.Window = w.Name
		t.MinStandby = ptr.Deref(w.MinStandby, t.MinStandby)
		t.MinRunning = ptr.Deref(w.MinRunning, 0)
		if w.MaxNodes != nil {
			t.MaxNodes = w.MaxNodes
		}
	}
	t.preWarm(pool.Spec.Windows, parsed, now)
	t.MaxStandby = max(ptr.Deref(pool.Spec.Standby.Max, t.MinStandby), t.MinStandby)
	return t, nil
}

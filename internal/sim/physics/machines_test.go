package physics

import (
	"testing"
	"time"
)

var epoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func TestBootPhase(t *testing.T) {
	at := func(s int) time.Time { return epoch.Add(time.Duration(s) * time.Second) }
	booting := Boot{Number: 1, RegisterAt: at(30), ReadyAt: at(40)}
	stopped := booting
	stopped.ShutdownAt = at(35)
	stoppedEarly := booting
	stoppedEarly.ShutdownAt = at(10)
	hibernated := booting
	hibernated.ShutdownAt, hibernated.Hibernated = at(45), true
	// Resumed at 100 after the hibernation at 45, thawing at 110: Ready again from the thaw.
	resumed := Boot{Number: 1, StartedAt: at(100), RegisterAt: at(30), ReadyAt: at(40), Resumes: 1, ThawedAt: at(110)}
	for _, c := range []struct {
		name  string
		boot  Boot
		now   int
		phase NodePhase
		since time.Time
	}{
		{"before registration", booting, 29, NodeAbsent, time.Time{}},
		{"registered", booting, 30, NodeNotReady, at(30)},
		{"ready", booting, 40, NodeReady, at(40)},
		{"stopped before ready", stopped, 50, NodeShuttingDown, at(35)},
		{"stopped before registering", stoppedEarly, 50, NodeAbsent, time.Time{}},
		{"hibernated", hibernated, 50, NodeFrozen, time.Time{}},
		{"resumed, not thawed yet", resumed, 109, NodeFrozen, time.Time{}},
		{"resumed and thawed", resumed, 110, NodeReady, at(110)},
	} {
		if phase, since := c.boot.Phase(at(c.now)); phase != c.phase || !since.Equal(c.since) {
			t.Errorf("%s: %v since %v, want %v since %v", c.name, phase, since, c.phase, c.since)
		}
	}
}

func TestBootNextEvent(t *testing.T) {
	at := func(s int) time.Time { return epoch.Add(time.Duration(s) * time.Second) }
	b := Boot{Number: 1, RegisterAt: at(30), ReadyAt: at(40)}
	if next, ok := b.NextEvent(at(0)); !ok || !next.Equal(at(30)) {
		t.Errorf("next after 0: %v %v, want registration at 30", next, ok)
	}
	if next, ok := b.NextEvent(at(30)); !ok || !next.Equal(at(40)) {
		t.Errorf("next after 30: %v %v, want readiness at 40", next, ok)
	}
	if next, ok := b.NextEvent(at(40)); ok {
		t.Errorf("next after 40: %v, want none", next)
	}
	b.ShutdownAt = at(35)
	if next, ok := b.NextEvent(at(30)); ok {
		t.Errorf("next after a shutdown at 35: %v, want none: events after the shutdown never happen", next)
	}
}

// A resumed boot's thaw is an event: the kubelet reports Ready again then.
func TestBootNextEventThaw(t *testing.T) {
	at := func(s int) time.Time { return epoch.Add(time.Duration(s) * time.Second) }
	b := Boot{Number: 1, RegisterAt: at(30), ReadyAt: at(40), Resumes: 1, ThawedAt: at(110)}
	if next, ok := b.NextEvent(at(100)); !ok || !next.Equal(at(110)) {
		t.Errorf("next after 100: %v %v, want the thaw at 110", next, ok)
	}
}

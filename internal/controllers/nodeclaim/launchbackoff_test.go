package nodeclaim

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A failing launch waits 2s, then twice as long each time up to the cap of 1m, each wait
// with at most 20% added; a launch that succeeds starts the schedule again, and each
// claim has its own.
func TestLaunchBackoffDoublesUpToItsCapWithJitter(t *testing.T) {
	opts := Options{}.WithDefaults()
	b := newLaunchBackoff(opts.LaunchBackoffBase, opts.LaunchBackoffMax)
	now := time.Unix(0, 0)
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute}
	var jittered bool
	for n, base := range want {
		got := b.failed("a", now)
		if got < base || got > base+base/5 {
			t.Fatalf("failure %d waits %s, want %s plus at most 20%%", n+1, got, base)
		}
		jittered = jittered || got != base
		if left := b.wait("a", now); left != got {
			t.Fatalf("right after failure %d the claim must wait %s, got %s", n+1, got, left)
		}
		if left := b.wait("a", now.Add(got)); left != 0 {
			t.Fatalf("once its wait is over, the claim still waits %s", left)
		}
		now = now.Add(got)
	}
	if !jittered {
		t.Error("no wait had any jitter")
	}
	if got := b.failed(types.UID("b"), now); got > 2*time.Second+400*time.Millisecond {
		t.Errorf("another claim's first failure waits %s; each claim has its own schedule", got)
	}
	b.forget("a")
	if left := b.wait("a", now); left != 0 {
		t.Errorf("a forgotten claim waits %s", left)
	}
	if got := b.failed("a", now); got > 2*time.Second+400*time.Millisecond {
		t.Errorf("after a success the first failure waits %s, want 2s again", got)
	}
}

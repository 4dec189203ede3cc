package nodeclaim

import (
	"testing"
	"time"
)

// State-change notices wake waiting claims, so the poll under them is longer; a poll
// interval set outright is kept either way.
func TestPollIntervalWithStateChangeNotices(t *testing.T) {
	cases := []struct {
		name string
		in   Options
		want time.Duration
	}{
		{"no notices", Options{}, 2 * time.Second},
		{"notices", Options{StateChangeNotices: true}, PollIntervalWithNotices},
		{"notices, interval set", Options{StateChangeNotices: true, PollInterval: 300 * time.Millisecond}, 300 * time.Millisecond},
	}
	for _, tc := range cases {
		if got := tc.in.WithDefaults().PollInterval; got != tc.want {
			t.Errorf("%s: PollInterval %v, want %v", tc.name, got, tc.want)
		}
	}
}

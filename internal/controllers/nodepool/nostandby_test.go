package nodepool

import (
	"strings"
	"testing"

	"github.com/stratos-sh/stratos/internal/windows"
)

// A pool whose class cannot stand by keeps no warm pool, and its condition says what the
// spec or a window asked for.
func TestWithoutStandby(t *testing.T) {
	cases := []struct {
		name    string
		targets windows.Targets
		want    []string
	}{
		{"no standby asked", windows.Targets{MaxStandby: 0}, []string{"cannot"}},
		{"the spec asks", windows.Targets{MinStandby: 3, MaxStandby: 5}, []string{"standby target of 3 is capped to 0"}},
		{"a window asks", windows.Targets{Window: "day", MinStandby: 4, MaxStandby: 4}, []string{"target of 4 (window day) is capped to 0"}},
		{"a pre-warm asks", windows.Targets{Window: "night", PreWarming: []string{"day"}, MinStandby: 2, MaxStandby: 2}, []string{"(pre-warming for window day)"}},
	}
	for _, c := range cases {
		obs := observation{target: c.targets.MinStandby, targets: c.targets}
		message := withoutStandby(&obs, "cannot")
		if obs.target != 0 || obs.targets.MinStandby != 0 || obs.targets.MaxStandby != 0 {
			t.Errorf("%s: target %d, targets %+v; want every standby target 0", c.name, obs.target, obs.targets)
		}
		for _, w := range c.want {
			if !strings.Contains(message, w) {
				t.Errorf("%s: message %q does not say %q", c.name, message, w)
			}
		}
	}
}

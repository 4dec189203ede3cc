package nodepool

import (
	"fmt"
	"strings"
)

// withoutStandby takes the warm pool out of a pass over a pool whose node class cannot
// stand nodes by (refused says why): the standby target and ceiling are 0, whatever the
// spec and the window in force ask, so the pool makes no standby claim and removes the
// ones it has. It returns the message of the pool's WarmPoolSupported condition.
func withoutStandby(obs *observation, refused string) string {
	asked := obs.targets.MinStandby
	obs.target, obs.targets.MinStandby, obs.targets.MaxStandby = 0, 0, 0
	if asked == 0 {
		return refused
	}
	var by string
	switch {
	case len(obs.targets.PreWarming) > 0:
		by = fmt.Sprintf(" (pre-warming for window %s)", strings.Join(obs.targets.PreWarming, ", "))
	case obs.targets.Window != "":
		by = fmt.Sprintf(" (window %s)", obs.targets.Window)
	}
	return fmt.Sprintf("%s; the standby target of %d%s is capped to 0", refused, asked, by)
}

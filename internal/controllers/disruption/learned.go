package disruption

import (
	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/windows"
)

// withPoolStatus adds to the window's targets what only the nodepool controller works
// out and publishes in the pool's status — the nodes a learned warm pool runs ahead of
// a peak, and the warm pool's target with its learned size and buffers' standby room —
// so that disruption keeps those nodes too, rather than giving back or terminating,
// before the peak, the nodes started for it.
func withPoolStatus(targets windows.Targets, pool *v1beta1.NodePool) windows.Targets {
	if learned := pool.Status.Learned; learned != nil {
		targets.MinRunning = max(targets.MinRunning, learned.Running)
	}
	targets.MaxStandby = max(targets.MaxStandby, pool.Status.StandbyTarget)
	return targets
}

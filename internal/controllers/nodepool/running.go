package nodepool

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// readiness orders standby claims to start for a running minimum: stopped ones start at
// once, warming ones soon, the rest later.
var readiness = map[v1alpha1.NodeClaimPhase]int{v1alpha1.PhaseStandby: 0, v1alpha1.PhaseWarmingUp: 1}

// startMinimum keeps at least the active window's minRunning nodes of the pool running,
// pods or not, so that a known peak finds them up: it asks standby claims to run, the
// readiest first, and launches the rest within the pool's cap on nodes. The warm pool
// refills behind them.
func (r *Reconciler) startMinimum(ctx context.Context, pool *v1alpha1.NodePool, obs *observation) error {
	want := int(obs.targets.MinRunning)
	if want == 0 {
		return nil
	}
	running, live := 0, 0
	var standby []*v1alpha1.NodeClaim
	for i := range obs.claims {
		c := &obs.claims[i]
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		live++
		if c.Spec.DesiredState == v1alpha1.DesiredRunning {
			running++
		} else {
			standby = append(standby, c)
		}
	}
	short := want - running
	if short <= 0 {
		return nil
	}
	sort.SliceStable(standby, func(a, b int) bool {
		x, y := rank(standby[a]), rank(standby[b])
		if x != y {
			return x < y
		}
		return standby[a].Name < standby[b].Name
	})
	started := 0
	for _, c := range standby[:min(short, len(standby))] {
		base := c.DeepCopy()
		c.Spec.DesiredState = v1alpha1.DesiredRunning
		if err := r.Client.Patch(ctx, c, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("starting claim %s for the running minimum: %w", c.Name, err)
		}
		started++
	}
	launch := short - started
	if limit := obs.targets.MaxNodes; limit != nil {
		launch = min(launch, int(*limit)-live-obs.created)
	}
	for range max(launch, 0) {
		if err := r.createClaim(ctx, pool, v1alpha1.DesiredRunning, obs); err != nil {
			return err
		}
	}
	r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, "RunningMinimum", "Scale",
		"Window %s keeps %d nodes running: started %d standby nodes and launched %d", obs.targets.Window, want, started, max(launch, 0))
	return nil
}

func rank(c *v1alpha1.NodeClaim) int {
	if r, ok := readiness[c.Status.Phase]; ok {
		return r
	}
	return len(readiness)
}

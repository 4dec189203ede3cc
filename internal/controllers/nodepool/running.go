package nodepool

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
)

// runMinimum carries out the running minimum's part of a plan, so that a known peak
// finds the active window's minRunning nodes up, pods or not: it asks the planned standby
// claims to run and launches the planned claims. The warm pool refills behind them
// within what the limits leave.
func (r *Reconciler) runMinimum(ctx context.Context, pool *v1beta1.NodePool, p plan, obs *observation) error {
	if len(p.start) == 0 && p.launch == 0 {
		return nil
	}
	byName := make(map[string]*v1beta1.NodeClaim, len(obs.claims))
	for i := range obs.claims {
		byName[obs.claims[i].Name] = &obs.claims[i]
	}
	for _, name := range p.start {
		c := byName[name]
		base := c.DeepCopy()
		c.Spec.DesiredState = v1beta1.DesiredRunning
		if err := r.Client.Patch(ctx, c, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("starting claim %s for the running minimum: %w", c.Name, err)
		}
	}
	for range p.launch {
		if err := r.createClaim(ctx, pool, claimtemplate.NewClaim(pool, v1beta1.DesiredRunning), obs); err != nil {
			return err
		}
	}
	r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, "RunningMinimum", "Scale",
		"Window %s keeps %d nodes running: started %d standby nodes and launched %d", obs.targets.Window, obs.targets.MinRunning, len(p.start), p.launch)
	return nil
}

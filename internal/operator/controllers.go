package operator

import (
	"context"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/internal/indexes"
)

// SetupControllers adds Stratos's controllers to mgr: the cache indexes they look
// objects up by, the nodepool controller, the NodeClaim lifecycle controller and
// garbage collection. Tests call it to run the same controllers as the operator.
func SetupControllers(ctx context.Context, mgr ctrl.Manager, cloud cloudprovider.CloudProvider, opts nodeclaim.Options) error {
	if err := indexes.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	recorder := mgr.GetEventRecorder("stratos")
	clk := clock.RealClock{}
	opts = opts.WithDefaults()
	if err := (&nodepool.Reconciler{Client: mgr.GetClient(), Cloud: cloud, Recorder: recorder, Clock: clk}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&nodeclaim.Lifecycle{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Cloud: cloud, Recorder: recorder, Clock: clk, Options: opts}).SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Add(&nodeclaim.GarbageCollector{Client: mgr.GetClient(), Cloud: cloud, Recorder: recorder, Clock: clk, Options: opts})
}

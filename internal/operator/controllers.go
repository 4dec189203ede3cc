package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/stratos-sh/stratos/internal/capacitybuffer"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	buffercontroller "github.com/stratos-sh/stratos/internal/controllers/capacitybuffer"
	"github.com/stratos-sh/stratos/internal/controllers/demand"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/controllers/interruption"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/internal/controllers/podstartup"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/podscope"
	"github.com/stratos-sh/stratos/internal/state"
)

// ControllerOptions tune the controllers.
type ControllerOptions struct {
	NodeClaim    nodeclaim.Options
	Provisioning provisioning.Options
	Disruption   disruption.Options
	NodePool     nodepool.Options
	// Calendar is the clock pools' windows are read on; nil is the real clock.
	Calendar clock.PassiveClock
	// PodScope is which pending pods provisioning serves (podscope): auto, all or
	// opted-in. Empty is all without a Detector, for tests of a Stratos alone.
	PodScope podscope.Scope
	// ClusterAutoscalerStatus is the ConfigMap auto looks for; zero is
	// podscope.DefaultStatusConfigMap.
	ClusterAutoscalerStatus types.NamespacedName
	// PodScopeInterval is how often auto looks; zero is podscope.DefaultInterval.
	PodScopeInterval time.Duration
	// CalendarChanged signals that the calendar was set anew: every pool is looked at.
	CalendarChanged <-chan struct{}
	// Notices is the cloud's notice queue (NoticesOf); the interruption controller reads
	// it. Nil runs no interruption controller.
	Notices cloudprovider.NoticeQueue
	// Unavailable is the cache of unavailable offerings the cloud provider given to
	// SetupControllers heeds; the interruption controller marks interrupted spot
	// offerings in it. Required with Notices.
	Unavailable *cloudprovider.UnavailableOfferings
	// Interruption tunes the interruption controller.
	Interruption interruption.Options
	// ClusterState, when set, is given the cluster picture the controllers share, for
	// tests that read what provisioning placed where (state.Cluster.Nominated): a
	// decision of interchangeable pods writes no reservation toleration to read.
	ClusterState func(*state.Cluster)
}

// SetupControllers adds Stratos's controllers to mgr: the cache indexes and the cluster
// state they read, provisioning and the measure of its pods' startup, disruption, the
// CapacityBuffer controller (when the cluster serves CapacityBuffers), the
// nodepool controller, the NodeClaim lifecycle controller, garbage collection and, with
// a notice queue, the interruption controller. Tests call it to run the same
// controllers as the operator.
func SetupControllers(ctx context.Context, mgr ctrl.Manager, cloud cloudprovider.CloudProvider, controllerOpts ControllerOptions) error {
	if controllerOpts.Notices != nil && controllerOpts.Unavailable == nil {
		return errors.New("the interruption controller needs the cloud provider's unavailable offerings (ControllerOptions.Unavailable)")
	}
	if err := indexes.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	recorder := mgr.GetEventRecorder("stratos")
	clk := clock.RealClock{}
	opts := controllerOpts.NodeClaim.WithDefaults()
	cluster := state.New(clk, opts.PrePullNamespace)
	if controllerOpts.ClusterState != nil {
		controllerOpts.ClusterState(cluster)
	}
	if err := cluster.Watch(ctx, mgr.GetCache()); err != nil {
		return fmt.Errorf("watching the cluster: %w", err)
	}
	disruptor := &disruption.Controller{Client: mgr.GetClient(), Cloud: cloud, APIReader: mgr.GetAPIReader(), State: cluster, Recorder: recorder, Clock: clk, Calendar: controllerOpts.Calendar, Options: controllerOpts.Disruption}
	if err := mgr.Add(disruptor); err != nil {
		return err
	}
	startup := podstartup.NewTracker(0)
	demandRecorder := &demand.Recorder{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Clock: clk, Calendar: controllerOpts.Calendar}
	if err := mgr.Add(demandRecorder); err != nil {
		return err
	}
	bufferRoom := capacitybuffer.NewStandbyRoom()
	provisioner := &provisioning.Provisioner{Client: mgr.GetClient(), Cloud: cloud, State: cluster, Recorder: recorder, Clock: clk, Calendar: controllerOpts.Calendar, Options: controllerOpts.Provisioning, Startup: startup, BufferRoom: bufferRoom, Demand: demandRecorder}
	buffers, err := buffercontroller.Installed(mgr.GetRESTMapper())
	if err != nil {
		return fmt.Errorf("looking for the CapacityBuffer CRD: %w", err)
	}
	if buffers {
		if err := provisioner.WatchBuffers(ctx, mgr.GetCache()); err != nil {
			return fmt.Errorf("watching capacity buffers: %w", err)
		}
	}
	if controllerOpts.PodScope != "" {
		scope, err := podScope(mgr, controllerOpts, provisioner.Trigger)
		if err != nil {
			return err
		}
		provisioner.Scope = scope
	}
	if err := mgr.Add(provisioner); err != nil {
		return err
	}
	if err := setupCapacityBuffers(ctx, mgr, recorder, buffers); err != nil {
		return err
	}
	if err := (&podstartup.Reconciler{Client: mgr.GetClient(), Tracker: startup}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&nodepool.Reconciler{Client: mgr.GetClient(), Cloud: cloud, Recorder: recorder, Clock: clk, Calendar: controllerOpts.Calendar, CalendarChanged: controllerOpts.CalendarChanged, Options: controllerOpts.NodePool, BufferRoom: bufferRoom, Served: demandRecorder}).SetupWithManager(mgr); err != nil {
		return err
	}
	recheck := nodeclaim.NewRecheck()
	if err := (&nodeclaim.Lifecycle{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Cloud: cloud, Recorder: recorder, Clock: clk, Options: opts, Nominations: cluster, Recheck: recheck}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.Add(&nodeclaim.GarbageCollector{Client: mgr.GetClient(), Cloud: cloud, Clock: clk, Options: opts, Recheck: recheck}); err != nil {
		return err
	}
	if controllerOpts.Notices == nil {
		return nil
	}
	return mgr.Add(&interruption.Controller{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Queue: controllerOpts.Notices, Unavailable: controllerOpts.Unavailable,
		Recorder: recorder, Clock: clk, Kick: disruptor.Trigger, Recheck: recheck, Options: controllerOpts.Interruption,
	})
}

// setupCapacityBuffers adds the CapacityBuffer controller when the cluster serves
// CapacityBuffers (autoscaling.x-k8s.io/v1beta1). Without the CRD, buffers are off: it
// says so once and Stratos runs without them.
func setupCapacityBuffers(ctx context.Context, mgr ctrl.Manager, recorder events.EventRecorder, installed bool) error {
	if !installed {
		ctrl.Log.WithName("capacitybuffer").Info("The cluster serves no CapacityBuffers (autoscaling.x-k8s.io/v1beta1): capacity buffers are off; install the CRD and restart Stratos to use them")
		return nil
	}
	return (&buffercontroller.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(), Recorder: recorder}).SetupWithManager(ctx, mgr)
}

// podScope adds the Detector that keeps the pod scope, which calls changed when the scope
// changes. It reads metadata only, uncached: a ConfigMap informer would watch every
// ConfigMap of the cluster, and Karpenter's kinds are not in the scheme.
func podScope(mgr ctrl.Manager, controllerOpts ControllerOptions, changed func()) (*podscope.Detector, error) {
	md, err := metadata.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("a metadata client for the pod scope: %w", err)
	}
	detector := &podscope.Detector{
		Mode: controllerOpts.PodScope, Metadata: md, StatusConfigMap: controllerOpts.ClusterAutoscalerStatus,
		Interval: controllerOpts.PodScopeInterval, OnChange: changed,
	}
	return detector, mgr.Add(detector)
}

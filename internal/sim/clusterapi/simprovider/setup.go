// Package simprovider runs the simulator's Cluster API providers (the sim.stratos.sh
// kinds) over the fake cloud: SimCluster and SimControlPlane stand for a cluster that
// exists already (the simulator's), SimConfig writes bootstrap data, and SimMachine
// launches, stops, starts and terminates a fake instance whose simulated kubelet
// registers the Node. With CAPI's own controllers beside them, real CAPI code moves
// Machines. It is the simulator's: Stratos never imports it.
package simprovider

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// Cloud is what the providers use of the fake cloud: its instance calls and catalogue,
// and the kubelets' view, which gives a machine's addresses. *fakecloud.Cloud is one.
type Cloud interface {
	Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error)
	StartInstances(ctx context.Context, ids []string) (map[string]error, error)
	StopInstances(ctx context.Context, ids []string, hibernate bool) (map[string]error, error)
	TerminateInstances(ctx context.Context, ids []string) (map[string]error, error)
	DescribeInstances(ctx context.Context, ids []string) (map[string]*cloudprovider.Instance, error)
	ListInstances(ctx context.Context, tags map[string]string) ([]*cloudprovider.Instance, error)
	InstanceTypes(ctx context.Context, nodeClass client.Object) ([]*cloudprovider.InstanceType, error)
	NodeViews() (time.Time, []physics.NodeView)
}

var _ Cloud = (*fakecloud.Cloud)(nil)

// Options configure the providers.
type Options struct {
	// ClusterName is the fake cloud's Options.ClusterName, when it has one: instances
	// are tagged stratos.sh/cluster with it, so that the cloud counts them its caller's.
	ClusterName string
	// TimeScale is the fake cloud's: the polls of an instance on the move are this much
	// faster than PollInterval. Defaults to 1.
	TimeScale float64
	// PollInterval is how often, in cloud time, a machine whose instance is on the move
	// (pending, stopping, shutting down) looks at it again. Defaults to 2s.
	PollInterval time.Duration
	// ResyncInterval is how often, in cloud time, a machine at rest looks at its
	// instance, to notice changes from outside (an instance stopped or gone).
	// Defaults to 60s.
	ResyncInterval time.Duration
}

// concurrency is how many SimMachines and SimConfigs are reconciled at once.
const concurrency = 8

// minPoll keeps a high time scale from turning polls into a hot loop.
const minPoll = 50 * time.Millisecond

func (o Options) withDefaults() Options {
	if o.TimeScale <= 0 {
		o.TimeScale = 1
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	if o.ResyncInterval <= 0 {
		o.ResyncInterval = time.Minute
	}
	return o
}

// scaled is d in cloud time as real time.
func (o Options) scaled(d time.Duration) time.Duration {
	return max(time.Duration(float64(d)/o.TimeScale), minPoll)
}

// AddToScheme adds what the providers read and write beyond the Kubernetes built-ins:
// the sim.stratos.sh kinds and CAPI's v1beta2 core kinds.
func AddToScheme(s *runtime.Scheme) error {
	if err := v1alpha1.AddToScheme(s); err != nil {
		return err
	}
	return clusterv1.AddToScheme(s)
}

// Setup adds the providers' controllers to a manager, whose scheme must know the
// sim.stratos.sh kinds and CAPI's core kinds (AddToScheme) and whose API server must
// serve both (simapi.Install and CAPI's CRDs). The fake cloud's kubelet simulator
// (kubelet.NewKubelet) registers the Nodes; run it beside them.
func Setup(mgr manager.Manager, cloud Cloud, opts Options) error {
	opts = opts.withDefaults()
	s := mgr.GetScheme()
	for _, obj := range []runtime.Object{&v1alpha1.SimMachine{}, &clusterv1.Machine{}} {
		if _, _, err := s.ObjectKinds(obj); err != nil {
			return fmt.Errorf("the manager's scheme lacks the providers' types (simprovider.AddToScheme): %w", err)
		}
	}
	recorder := mgr.GetEventRecorder("sim-capi-provider")
	reconcilers := []interface{ setup(manager.Manager) error }{
		&clusterReconciler{client: mgr.GetClient(), cloud: cloud},
		&controlPlaneReconciler{client: mgr.GetClient()},
		&configReconciler{client: mgr.GetClient(), recorder: recorder},
		&machineReconciler{client: mgr.GetClient(), cloud: cloud, recorder: recorder, opts: opts},
	}
	for _, r := range reconcilers {
		if err := r.setup(mgr); err != nil {
			return err
		}
	}
	return nil
}

package runner

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/capienv"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// simMachineGVK is the simulator's infrastructure machine, which the runner watches for
// power changes without importing its types: what it checks is not what it runs.
var simMachineGVK = schema.GroupVersionKind{Group: "sim.stratos.sh", Version: "v1alpha1", Kind: "SimMachine"}

// clusterAPISimCloud is Cluster API with the simulator's infrastructure provider: the
// operator writes Machines, CAPI's core controllers (bin/capi-manager, a child process)
// reconcile them, and the simulator's providers (in this process) boot each as an
// instance of the fake cloud, whose kubelet simulator registers its Node. The operator
// never calls the fake cloud; it sees it only through CAPI's objects.
type clusterAPISimCloud struct {
	// classes translate the scenario's node classes once the cluster and templates exist.
	classes clusterAPINodeClasses
	cloud   *fakecloud.Cloud
	reader  client.Reader
	watch   *machineWatch
	// webhook is where CAPI's manager serves the webhooks installClusterAPI configured.
	webhook *capienv.Webhook
	// stopCAPI stops CAPI's manager; nil until it runs.
	stopCAPI func() error
}

// newClusterAPICloud makes the fake cloud the simulator's provider boots machines in, and
// registers the watch of the operator's Machines on the simulator's manager.
func newClusterAPICloud(ctx context.Context, s *scenario.Scenario, mgr manager.Manager, webhook *capienv.Webhook) (*clusterAPISimCloud, error) {
	opts := fakecloud.Options{Clock: clock.RealClock{}, TimeScale: s.TimeScale, Seed: s.Seed, Physics: physics.DefaultPhysics().With(s.Physics)}
	if s.CallLatency != nil {
		opts.CallLatency = s.CallLatency.Duration
	}
	c := &clusterAPISimCloud{cloud: fakecloud.New(opts), reader: mgr.GetClient(), watch: newMachineWatch(ClusterName), webhook: webhook}
	c.cloud.SetFaults(faults(s.Faults))
	machines, err := mgr.GetCache().GetInformer(ctx, &clusterv1.Machine{})
	if err != nil {
		return nil, err
	}
	if _, err := machines.AddEventHandler(c.watch.machineHandler()); err != nil {
		return nil, err
	}
	simMachine := &unstructured.Unstructured{}
	simMachine.SetGroupVersionKind(simMachineGVK)
	simMachines, err := mgr.GetCache().GetInformer(ctx, simMachine)
	if err != nil {
		return nil, err
	}
	_, err = simMachines.AddEventHandler(c.watch.simMachineHandler())
	return c, err
}

func (c *clusterAPISimCloud) Instances() []cloudprovider.Instance { return c.cloud.Instances() }
func (c *clusterAPISimCloud) machines() kubelet.Machines          { return c.cloud }

// owned lists the Machines and the fake instances no Machine accounts for, from the
// simulator's cache; an error (a cache not synced) shows as nothing owned and the
// invariants check tries again.
func (c *clusterAPISimCloud) owned() []cloudprovider.Instance {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	machines, simMachines, err := listOwned(ctx, c.reader, ClusterName)
	if err != nil {
		return nil
	}
	return ownedInstances(ClusterName, machines, simMachines, c.cloud.Instances())
}

func (c *clusterAPISimCloud) operatorFlags() []string { return []string{"--cloud-provider=clusterapi"} }
func (c *clusterAPISimCloud) operatorEnv() []string   { return nil }
func (c *clusterAPISimCloud) calls() map[string]int   { return c.watch.calls() }

// record reports the operator's Machine writes as its cloud calls, and the calls the
// simulator's provider made to the fake cloud as the simulator's.
func (c *clusterAPISimCloud) record(rep *report.Report) {
	rep.CloudCalls = c.watch.calls()
	rep.SimulatorCloudCalls = c.cloud.Calls()
}
func (c *clusterAPISimCloud) startCalls() []startCall      { return c.watch.startCalls() }
func (c *clusterAPISimCloud) setFaults(f *scenario.Faults) { c.cloud.SetFaults(faults(f)) }
func (c *clusterAPISimCloud) problems() []string           { return nil }

// Validation refuses interrupt steps on clusterapi: this answers a caller that did not
// validate.
func (c *clusterAPISimCloud) interrupt(string, []string, time.Duration) error {
	return errors.New("interrupt: the operator hears no cloud notices on clusterapi")
}

func (c *clusterAPISimCloud) makeUnhealthy(ids []string, how physics.Unhealthy) error {
	return c.cloud.MakeUnhealthy(ids, how)
}

func (c *clusterAPISimCloud) stop() {
	if c.stopCAPI != nil {
		_ = c.stopCAPI()
	}
}

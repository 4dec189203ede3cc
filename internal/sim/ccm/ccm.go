// Package ccm runs, for the simulated cluster, the part of a cloud controller manager that
// acts on Nodes whose instances stop or go away: the node lifecycle controller of
// k8s.io/cloud-provider, the code EKS's cloud controller manager runs. It taints the Node
// of a stopped instance node.cloudprovider.kubernetes.io/shutdown while it is not Ready,
// removes the taint once it is Ready again, and deletes the Node of an instance the cloud
// no longer has. Only the answers about instances are the simulator's: they come from
// the simulated cloud's own records, so Stratos meets the same taints as on EKS.
package ccm

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/controllers/nodelifecycle"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"

	stratoscloud "github.com/stratos-sh/stratos/internal/cloudprovider"
)

// MonitorPeriod is the cloud controller manager's default --node-monitor-period.
const MonitorPeriod = 5 * time.Second

// Instances lists what the simulated cloud knows of its instances, terminated ones
// included until it forgets them.
type Instances func() []stratoscloud.Instance

// Run runs the node lifecycle controller until ctx ends, checking every Node each period.
func Run(ctx context.Context, kube kubernetes.Interface, instances Instances, period time.Duration) error {
	factory := informers.NewSharedInformerFactory(kube, 0)
	controller, err := nodelifecycle.NewCloudNodeLifecycleController(factory.Core().V1().Nodes(), kube, &cloud{instances: instances}, period, 4)
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for informer, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("the %v informer did not sync", informer)
		}
	}
	controller.Run(ctx, controllersmetrics.NewControllerManagerMetrics("cloud-controller-manager"))
	factory.Shutdown()
	return nil
}

// cloud is a cloudprovider.Interface that answers only about instances.
type cloud struct{ instances Instances }

var _ cloudprovider.Interface = (*cloud)(nil)

func (c *cloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}
func (c *cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool)                  { return nil, false }
func (c *cloud) Instances() (cloudprovider.Instances, bool)                        { return nil, false }
func (c *cloud) InstancesV2() (cloudprovider.InstancesV2, bool)                    { return c, true }
func (c *cloud) Zones() (cloudprovider.Zones, bool)                                { return nil, false }
func (c *cloud) Clusters() (cloudprovider.Clusters, bool)                          { return nil, false }
func (c *cloud) Routes() (cloudprovider.Routes, bool)                              { return nil, false }
func (c *cloud) ProviderName() string                                              { return "stratos-simulator" }
func (c *cloud) HasClusterID() bool                                                { return true }

// InstanceExists answers as EC2's provider does: an instance exists until it is terminated.
func (c *cloud) InstanceExists(_ context.Context, node *corev1.Node) (bool, error) {
	instance, err := c.find(node)
	if errors.Is(err, cloudprovider.InstanceNotFound) {
		return false, nil
	}
	return err == nil && instance.State != stratoscloud.StateTerminated, err
}

// InstanceShutdown answers as EC2's provider does: a stopped instance is shut down.
func (c *cloud) InstanceShutdown(_ context.Context, node *corev1.Node) (bool, error) {
	instance, err := c.find(node)
	if errors.Is(err, cloudprovider.InstanceNotFound) {
		return false, nil
	}
	return err == nil && instance.State == stratoscloud.StateStopped, err
}

// InstanceMetadata is not asked by the node lifecycle controller of a Node with a
// provider ID, which every simulated kubelet registers with.
func (c *cloud) InstanceMetadata(_ context.Context, node *corev1.Node) (*cloudprovider.InstanceMetadata, error) {
	instance, err := c.find(node)
	if err != nil {
		return nil, err
	}
	return &cloudprovider.InstanceMetadata{ProviderID: instance.ProviderID, InstanceType: instance.Type, Zone: instance.Zone}, nil
}

func (c *cloud) find(node *corev1.Node) (stratoscloud.Instance, error) {
	if node.Spec.ProviderID == "" {
		return stratoscloud.Instance{}, cloudprovider.InstanceNotFound
	}
	for _, instance := range c.instances() {
		if instance.ProviderID == node.Spec.ProviderID {
			return instance, nil
		}
	}
	return stratoscloud.Instance{}, cloudprovider.InstanceNotFound
}

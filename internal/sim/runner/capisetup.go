package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/capienv"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simprovider"
	"github.com/stratos-sh/stratos/internal/sim/controlplane"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// The simulator's CAPI cluster: the simulated cluster itself, made a CAPI cluster of
// itself, in a namespace of its own, with one pair of templates every node class names.
const (
	capiNamespace = "capi-sim"
	capiTemplates = "sim-nodes"
)

// installClusterAPI installs CAPI's CRDs and webhook configurations, calling a webhook
// on loopback with certificates of the run's own, and the simulator's providers' CRDs.
func installClusterAPI(ctx context.Context, cfg *rest.Config, toolsDir, workDir string) (*capienv.Webhook, error) {
	webhook, err := capienv.NewWebhook(filepath.Join(workDir, "capi-webhook-certs"))
	if err != nil {
		return nil, err
	}
	if err := capienv.Install(ctx, cfg, filepath.Join(toolsDir, capienv.ConfigDir), webhook); err != nil {
		return nil, fmt.Errorf("installing Cluster API's CRDs and webhooks from %s (hack/tools.sh capi-manager links them): %w", toolsDir, err)
	}
	if err := simapi.Install(cfg); err != nil {
		return nil, fmt.Errorf("installing the simulator's provider CRDs: %w", err)
	}
	return webhook, nil
}

// setupProviders runs the simulator's infrastructure and bootstrap providers in the
// simulator's manager, over the fake cloud, polling at the scenario's time scale.
func (c *clusterAPISimCloud) setupProviders(mgr manager.Manager, timeScale float64) error {
	return simprovider.Setup(mgr, c.cloud, simprovider.Options{ClusterName: ClusterName, TimeScale: timeScale})
}

// start runs CAPI's core manager and makes the simulated cluster a CAPI cluster of
// itself, with the templates the node classes name, which it then describes.
func (c *clusterAPISimCloud) start(ctx context.Context, cp *controlplane.ControlPlane, toolsDir, workDir string) error {
	log, err := os.Create(filepath.Join(workDir, "capi-manager.log"))
	if err != nil {
		return err
	}
	manager, err := capienv.Start(ctx, capienv.Options{ToolsDir: toolsDir, Kubeconfig: cp.AdminKubeconfig, RestConfig: cp.Config, Webhook: c.webhook, Log: log})
	if err != nil {
		log.Close()
		return fmt.Errorf("starting Cluster API's manager (log %s): %w", log.Name(), err)
	}
	c.stopCAPI = func() error { return errors.Join(manager.Stop(), log.Close()) }

	version, err := serverVersion(cp.Config)
	if err != nil {
		return err
	}
	kubeconfig, err := os.ReadFile(cp.AdminKubeconfig)
	if err != nil {
		return err
	}
	writer, err := client.New(cp.Config, client.Options{Scheme: simScheme})
	if err != nil {
		return err
	}
	cluster, err := simprovider.CreateCluster(ctx, writer, simprovider.ClusterOptions{
		Namespace: capiNamespace, Name: ClusterName, Kubeconfig: kubeconfig, KubernetesVersion: version,
	})
	if err != nil {
		return err
	}
	templates, err := simprovider.CreateTemplates(ctx, writer, simprovider.TemplateOptions{Namespace: capiNamespace, Name: capiTemplates, Config: templateConfig})
	if err != nil {
		return err
	}
	c.classes = clusterAPINodeClasses{
		cluster:        v1beta1.ClusterAPIClusterReference{Namespace: cluster.Namespace, Name: cluster.Name},
		bootstrap:      templates.Bootstrap,
		infrastructure: templates.Infrastructure,
		version:        version,
		catalog:        fakecloud.DefaultCatalog(),
	}
	return nil
}

// templateConfig is the SimConfigTemplate's join configuration, in kubeadm's shape, as
// a KubeadmConfigTemplate's is: the provider writes each launch's labels and taints
// into a bootstrap config of that shape only, and an empty join configuration would not
// show (the field is omitted when empty). Without them a Node would register untainted,
// and pods could land on a machine launched for standby before the operator tainted it.
// Its one flag labels the Nodes with the template they came from.
var templateConfig = v1alpha1.SimConfigSpec{JoinConfiguration: v1alpha1.JoinConfiguration{
	NodeRegistration: v1alpha1.NodeRegistrationOptions{
		KubeletExtraArgs: []v1alpha1.Arg{{Name: "node-labels", Value: "sim.stratos.sh/template=" + capiTemplates}},
	},
}}

// serverVersion is the control plane's Kubernetes version, such as v1.37.0: the
// Machines' and the control plane's.
func serverVersion(cfg *rest.Config) (string, error) {
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	info, err := d.ServerVersion()
	if err != nil {
		return "", err
	}
	return info.GitVersion, nil
}

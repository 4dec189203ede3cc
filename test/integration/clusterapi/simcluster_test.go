package clusterapi_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capicontract"
	"github.com/stratos-sh/stratos/internal/cloudprovider/clusterapi"
	"github.com/stratos-sh/stratos/internal/controllers/clusterapinodeclass"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
	"github.com/stratos-sh/stratos/test/stack"
)

// The simulated cluster the product's tests launch in: the simulator's infrastructure
// and bootstrap providers over a fake cloud whose kubelets register the Nodes, a CAPI
// Cluster of the API server itself, and a ClusterAPINodeClass of its templates.
const (
	simNamespace = "capi-sim"
	simCluster   = "sim"
	simClass     = "sim"
	simVersion   = "v1.37.0"
	// timeScale runs the fake cloud forty times faster than real time: a machine boots
	// in about a second.
	timeScale = 40
)

// cloud is the fake cloud the simulator's SimMachines boot in.
var cloud *fakecloud.Cloud

// startSimulatedCluster installs the simulator's CRDs, runs its providers, the fake
// kubelets and the ClusterAPINodeClass controller in one manager until ctx ends, and
// creates the Cluster and the class, waiting until the class is Ready.
func startSimulatedCluster(ctx context.Context, kubeconfig string) error {
	if err := simapi.Install(env.Config); err != nil {
		return fmt.Errorf("installing the simulator's CRDs: %w", err)
	}
	cloud = fakecloud.New(fakecloud.Options{Clock: clock.RealClock{}, TimeScale: timeScale, Seed: 31, ClusterName: stack.ClusterName})
	mgr, err := ctrl.NewManager(env.Config, manager.Options{
		Logger: logr.Discard(), Scheme: c.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	if err := kubelet.NewKubelet(cloud, mgr.GetClient(), kubelet.KubeletOptions{}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := simprovider.Setup(mgr, cloud, simprovider.Options{ClusterName: stack.ClusterName, TimeScale: timeScale}); err != nil {
		return err
	}
	classes := &clusterapinodeclass.ClusterAPIReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Resolver: capicontract.Resolver{Mapper: mgr.GetRESTMapper(), Reader: mgr.GetAPIReader()},
		Powers:   clusterapi.DefaultPowers(), Recorder: mgr.GetEventRecorder("stratos"),
		// As the operator wires it: the instance types' prices and capacities, as the
		// provider reads them.
		Check: func(class *v1beta1.ClusterAPINodeClass) error {
			_, err := clusterapi.InstanceTypesOf(class)
			return err
		},
	}
	if err := classes.SetupWithManager(mgr); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "the simulated cluster's manager:", err)
		}
	}()

	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		return err
	}
	if _, err := simprovider.CreateCluster(ctx, c, simprovider.ClusterOptions{
		Namespace: simNamespace, Name: simCluster, Kubeconfig: data, KubernetesVersion: simVersion,
	}); err != nil {
		return err
	}
	templates, err := simprovider.CreateTemplates(ctx, c, simprovider.TemplateOptions{Namespace: simNamespace, Name: simCluster})
	if err != nil {
		return err
	}
	types, err := offeredTypes(ctx, "m5.large", "m5.xlarge")
	if err != nil {
		return err
	}
	class := &v1beta1.ClusterAPINodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: simClass},
		Spec: v1beta1.ClusterAPINodeClassSpec{
			Cluster:                   v1beta1.ClusterAPIClusterReference{Namespace: simNamespace, Name: simCluster},
			BootstrapTemplateRef:      templates.Bootstrap,
			InfrastructureTemplateRef: templates.Infrastructure,
			Version:                   simVersion,
			InstanceTypes:             types,
		},
	}
	if err := c.Create(ctx, class); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		cluster := &clusterv1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: simNamespace, Name: simCluster}, cluster); err != nil {
			return false, err
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(class), class); err != nil {
			return false, err
		}
		return ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false) &&
			ptr.Deref(cluster.Status.Initialization.ControlPlaneInitialized, false) &&
			meta.IsStatusConditionTrue(class.Status.Conditions, v1beta1.ConditionReady), nil
	})
}

// offeredTypes are the fake catalogue's types of those names as a ClusterAPINodeClass
// offers them: their capacity, the zones they are offered on demand in, their price.
func offeredTypes(ctx context.Context, names ...string) ([]v1beta1.ClusterAPIInstanceType, error) {
	catalogue, err := cloud.InstanceTypes(ctx, &v1beta1.FakeNodeClass{Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: names}})
	if err != nil {
		return nil, err
	}
	var out []v1beta1.ClusterAPIInstanceType
	for _, t := range catalogue {
		offered := v1beta1.ClusterAPIInstanceType{Name: t.Name, Capacity: t.Capacity.DeepCopy(), Architecture: t.Architecture}
		for _, o := range t.Offerings {
			if o.CapacityType == v1beta1.CapacityTypeOnDemand && o.Available {
				offered.Zones = append(offered.Zones, o.Zone)
				offered.PricePerHour = fmt.Sprintf("%g", o.PricePerHour)
			}
		}
		out = append(out, offered)
	}
	return out, nil
}

// newFixture is one test's operator, its controllers in the test process as
// test/stack runs them, on the Cluster API provider, against the package's API server,
// CAPI manager and simulated cluster.
func newFixture(t *testing.T) *stack.Fixture {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := &stack.Fixture{T: t, Ctx: ctx, Env: env, Cloud: cloud}
	f.Opts = stack.OperatorOptions{NodeClaim: nodeclaimOptions()}
	f.Op = startOperator(t, f.Opts)
	return f
}

// startOperator runs the operator's controllers with the Cluster API provider.
func startOperator(t *testing.T, opts stack.OperatorOptions) *stack.Operator {
	return startOperatorOn(t, opts, interceptor.Funcs{})
}

// startOperatorOn is startOperator whose provider's client calls go through funcs.
func startOperatorOn(t *testing.T, opts stack.OperatorOptions, funcs interceptor.Funcs) *stack.Operator {
	t.Helper()
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	provider, err := clusterapi.New(clusterapi.Options{ClusterName: stack.ClusterName, Client: interceptor.NewClient(base, funcs), Powers: clusterapi.DefaultPowers()})
	if err != nil {
		t.Fatal(err)
	}
	return stack.StartOperator(t, env, provider, opts)
}

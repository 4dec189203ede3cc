// Package operator wires Stratos together: the controller-runtime manager with leader
// election, health probes and metrics, the cloud provider, and the controllers.
package operator

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/calendar"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/scheme"
)

// The permissions of the operator's ClusterRole and Role (config/rbac/role.yaml, `make
// generate`), each verb one the code uses; docs/operations.md#permissions says why each is
// needed. The fake cloud's kubelets have their own role (internal/sim/kubelet).
//
// In the operator's namespace (a Role): the leader-election Lease (client-go's LeaseLock
// gets, creates and updates it) and the core Events leader election records on it.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=stratos
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch,namespace=stratos
//
// Cluster-wide: Stratos's own Events (events.k8s.io) are about NodePools, NodeClaims and
// Nodes, which are cluster-scoped and so have their Events in the default namespace, and
// about pods in their own namespaces, so they cannot be confined to one namespace.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// The pools: read, finalizer patched, status updated (nodepool controller).
// +kubebuilder:rbac:groups=stratos.sh,resources=nodepools,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=stratos.sh,resources=nodepools/status,verbs=update
// A claim's ownerReference to its pool blocks the pool's foreground deletion
// (blockOwnerDeletion), which OwnerReferencesPermissionEnforcement allows only to who
// may update the pool's finalizers.
// +kubebuilder:rbac:groups=stratos.sh,resources=nodepools/finalizers,verbs=update
// The claims: made by provisioning, the pool and disruption, patched and deleted.
// +kubebuilder:rbac:groups=stratos.sh,resources=nodeclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=stratos.sh,resources=nodeclaims/status,verbs=patch
// The node classes are read (the EC2NodeClass controller adds its own verbs).
// +kubebuilder:rbac:groups=stratos.sh,resources=fakenodeclasses;ec2nodeclasses;clusterapinodeclasses,verbs=get;list;watch
// Nodes: read, labelled, tainted and cordoned by patch, deleted with their claim or as
// leaks. Stratos never creates a Node (the kubelet does) nor writes its status.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch;delete
// Pods: read, patched with a reservation's toleration, evicted through the Eviction API
// (which honours PodDisruptionBudgets server-side), deleted once a drain's timeout passed.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// PodDisruptionBudgets: read (the cluster state keeps them), so that disruption chooses
// only nodes whose pods they let go now, and takes back a drain they block.
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// DaemonSets: their pods take their share of every new node.
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch
// Storage: the claims, volumes and classes pods' volumes name, and the CSINodes that
// publish each node's attach limits, read as kube-scheduler reads them to place pods.
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses;csinodes,verbs=get;list;watch
// Another autoscaler, for --pod-scope=auto (internal/podscope): whether Karpenter
// NodePools exist, by a list of one item's metadata (no watch: the kind may not exist).
// +kubebuilder:rbac:groups=karpenter.sh,resources=nodepools,verbs=list
//
// In kube-system (a Role of its own): whether Cluster Autoscaler's status ConfigMap
// exists, that one ConfigMap by name; the chart grants it in the namespace and for the
// name of --cluster-autoscaler-status-configmap, and only with --pod-scope=auto.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get,namespace=kube-system,resourceNames=cluster-autoscaler-status

// inClusterNamespaceFile holds the operator's namespace when it runs in a pod (a
// variable for the tests).
var inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Operator is a configured operator, ready to start.
type Operator struct {
	Manager manager.Manager
	Cloud   cloudprovider.CloudProvider
}

// RESTConfig loads the API server's address and credentials: --kubeconfig, then
// $KUBECONFIG, then the in-cluster service account, then ~/.kube/config.
func RESTConfig(opts *Options) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if opts.Kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	} else {
		cfg, err = config.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.QPS = float32(opts.KubeAPIQPS)
	cfg.Burst = opts.KubeAPIBurst
	cfg.UserAgent = "stratos"
	return cfg, nil
}

// ManagerOption adjusts the manager's options before it is made. The binary passes none;
// a test that runs the operator more than once in one process turns off controller-runtime's
// check that each controller name is used once per process.
type ManagerOption func(*manager.Options)

// New builds the manager, the cloud provider and the controllers. Nothing runs until Start.
func New(ctx context.Context, opts *Options, cfg *rest.Config, logger logr.Logger, adjust ...ManagerOption) (*Operator, error) {
	gracefulShutdown := opts.GracefulShutdownTimeout
	mgrOpts := manager.Options{
		Scheme:                        scheme.Scheme,
		Logger:                        logger,
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsBindAddress},
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		PprofBindAddress:              opts.PprofBindAddress,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionNamespace:       leaderElectionNamespace(opts),
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &opts.LeaderElectionLeaseDuration,
		RenewDeadline:                 &opts.LeaderElectionRenewDeadline,
		RetryPeriod:                   &opts.LeaderElectionRetryPeriod,
		GracefulShutdownTimeout:       &gracefulShutdown,
	}
	for _, a := range adjust {
		a(&mgrOpts)
	}
	mgr, err := manager.New(cfg, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("crds", crdsInstalled(mgr, opts.CloudProvider)); err != nil {
		return nil, err
	}
	cloud, err := newCloudProvider(ctx, opts, mgr)
	if err != nil {
		return nil, err
	}
	controllerOpts := opts.ControllerOptions()
	controllerOpts.Notices, controllerOpts.Unavailable = cloud.notices, cloud.unavailable
	// The EventBridge rules of an AWS interruption queue (docs/interruptions.md) include
	// EC2's state-change notifications, which wake the claims waiting on their instance:
	// the poll is only the net under a notice lost, and can be slower. The fake cloud's
	// queue posts every state change once it is read, as those rules deliver them.
	controllerOpts.NodeClaim.StateChangeNotices = cloud.notices != nil && (opts.CloudProvider == ProviderAWS || opts.CloudProvider == ProviderFake)
	if opts.CalendarFile != "" {
		cal, err := calendar.NewFile(opts.CalendarFile, clock.RealClock{})
		if err != nil {
			return nil, err
		}
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { return cal.Watch(ctx, 250*time.Millisecond) })); err != nil {
			return nil, err
		}
		controllerOpts.Calendar, controllerOpts.CalendarChanged = cal, cal.Changed()
	}
	if err := SetupControllers(ctx, mgr, cloud.provider, controllerOpts); err != nil {
		return nil, fmt.Errorf("setting up the controllers: %w", err)
	}
	return &Operator{Manager: mgr, Cloud: cloud.provider}, nil
}

// Start runs the operator until ctx is cancelled, then stops gracefully: controllers
// finish within --graceful-shutdown-timeout and the leader releases its Lease.
func (o *Operator) Start(ctx context.Context) error {
	return o.Manager.Start(ctx)
}

// crdsInstalled fails the readiness probe until the API server serves every Stratos
// kind, and with the clusterapi provider Cluster API's Machine.
func crdsInstalled(mgr manager.Manager, provider string) healthz.Checker {
	var kinds []schema.GroupVersionKind
	for _, kind := range []string{"NodePool", "NodeClaim", "FakeNodeClass", "EC2NodeClass", "ClusterAPINodeClass"} {
		kinds = append(kinds, v1beta1.GroupVersion.WithKind(kind))
	}
	if provider == ProviderClusterAPI {
		kinds = append(kinds, clusterv1.GroupVersion.WithKind("Machine"))
	}
	return func(*http.Request) error {
		for _, gvk := range kinds {
			if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				if gvk.Group != v1beta1.Group {
					return fmt.Errorf("the API server does not serve %s (is Cluster API installed?): %w", gvk, err)
				}
				return fmt.Errorf("the API server does not serve %s (are the CRDs of config/crd/bases installed?): %w", gvk.GroupKind(), err)
			}
		}
		return nil
	}
}

// leaderElectionNamespace is --leader-election-namespace, else the pod's namespace, else
// kube-system for an operator run outside the cluster.
func leaderElectionNamespace(opts *Options) string {
	return namespaceOr(opts.LeaderElectionNamespace)
}

// namespaceOr is namespace when set, else the operator's own: the pod's namespace in a
// cluster, kube-system outside.
func namespaceOr(namespace string) string {
	if namespace != "" {
		return namespace
	}
	if data, err := os.ReadFile(inClusterNamespaceFile); err == nil && len(data) > 0 {
		return strings.TrimSpace(string(data))
	}
	return "kube-system"
}

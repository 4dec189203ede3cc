package operator

import (
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stratos-sh/stratos/api/v1beta1"

	"github.com/stratos-sh/stratos/internal/capicontract"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/cloudprovider/clusterapi"
	"github.com/stratos-sh/stratos/internal/controllers/clusterapinodeclass"
)

// newClusterAPICloud builds the Cluster API provider, which launches nodes as Machines
// of the clusters ClusterAPINodeClasses name and powers machines off and on where it
// knows how, and the ClusterAPINodeClass controller, which checks the classes and says
// which can stand nodes by with the same power interfaces.
func newClusterAPICloud(opts *Options, mgr manager.Manager) (cloudprovider.API, error) {
	powers := clusterapi.DefaultPowers()
	api, err := clusterapi.New(clusterapi.Options{ClusterName: opts.ClusterName, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Powers: powers})
	if err != nil {
		return nil, err
	}
	classes := &clusterapinodeclass.ClusterAPIReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Resolver: capicontract.Resolver{Mapper: mgr.GetRESTMapper(), Reader: mgr.GetAPIReader()},
		Powers:   powers, Recorder: mgr.GetEventRecorder("stratos"),
		// The instance types' prices and capacities, as the provider reads them.
		Check: func(class *v1beta1.ClusterAPINodeClass) error {
			_, err := clusterapi.InstanceTypesOf(class)
			return err
		},
	}
	if err := classes.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	return api, nil
}

package runner

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// simScheme is what the simulator's manager reads and writes: the operator's types, and
// on clusterapi CAPI's Machines and Clusters too. The operator's own scheme stays free of
// what only the simulator needs.
var simScheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(simScheme))
	utilruntime.Must(v1beta1.AddToScheme(simScheme))
	utilruntime.Must(clusterv1.AddToScheme(simScheme))
}

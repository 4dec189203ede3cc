package runner

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simprovider"
)

// simScheme is what the simulator's manager reads and writes: the operator's types (the
// CapacityBuffers whose conditions scenarios count among them), and
// for clusterapi CAPI's core kinds, the simulator's providers' sim.stratos.sh kinds and
// the CRDs that install them. The operator's own scheme stays free of what only the
// simulator needs.
var simScheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(simScheme))
	utilruntime.Must(v1beta1.AddToScheme(simScheme))
	utilruntime.Must(autoscalingv1beta1.AddToScheme(simScheme))
	utilruntime.Must(clusterv1.AddToScheme(simScheme))
	utilruntime.Must(simprovider.AddToScheme(simScheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(simScheme))
}

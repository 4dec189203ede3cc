// Package scheme holds the types Stratos reads and writes: the Kubernetes built-ins, the
// stratos.sh kinds, and Cluster API's core kinds (v1beta2: Machine, Cluster), which the
// clusterapi provider reads and writes. The operator, the simulator and the test harness share it.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Scheme knows every type Stratos uses. Treat it as read-only.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(v1beta1.AddToScheme(Scheme))
	utilruntime.Must(autoscalingv1beta1.AddToScheme(Scheme))
	utilruntime.Must(clusterv1.AddToScheme(Scheme))
}

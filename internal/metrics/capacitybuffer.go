package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// CapacityBufferPods counts a CapacityBuffer's virtual pods by where provisioning's last
// pass found them room: running (Nodes and claims asked to run), standby (standby nodes
// asked of the warm pools) or unplaced.
var CapacityBufferPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "stratos_capacitybuffer_pods",
	Help: "A CapacityBuffer's virtual pods by where provisioning keeps their room: running, standby or unplaced.",
}, []string{"namespace", "name", "placement"})

// ForgetCapacityBuffer drops the series of a buffer that is gone.
func ForgetCapacityBuffer(namespace, name string) {
	CapacityBufferPods.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name})
}

// capacityBufferServed adds the gauge to All, which the package's init registers. A variable, not an
// init: variables are all set before any init runs, whatever the files' order.
var capacityBufferServed = func() bool {
	All = append(All, CapacityBufferPods)
	return true
}()

package runner

import (
	"os"
	"sync"
)

// worldGOGC is the GOGC the simulated world's processes run with (etcd, kube-apiserver,
// kube-scheduler, kube-controller-manager, CAPI's manager): at Go's default of 100 the
// API server spends about a sixth of its CPU collecting garbage, and four scenarios side
// by side in test/e2e share two cores. At 400 they trade memory for CPU. The operator
// keeps the setting the simulator was started with, as its memory is measured.
const worldGOGC = "400"

// operatorGOGC sets worldGOGC in the simulator's environment for the processes it starts,
// unless GOGC is set already (then everything runs with it), and returns GOGC as it was,
// for the operator: "" is Go's default. envtest starts etcd and kube-apiserver with the
// simulator's environment and has no setting of its own for it; the simulator's own
// collector read GOGC when it started, so it is unchanged.
var operatorGOGC = sync.OnceValue(func() string {
	gogc, set := os.LookupEnv("GOGC")
	if !set {
		_ = os.Setenv("GOGC", worldGOGC)
	}
	return gogc
})

package operator

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stratos-sh/stratos/internal/version"
)

// buildInfo is always 1; its labels say which build runs, so dashboards can join on it.
var buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "stratos_build_info",
	Help: "Always 1; the labels name the running build's version, source revision and Go version.",
}, []string{"version", "revision", "goversion"})

func init() {
	crmetrics.Registry.MustRegister(buildInfo)
	info := version.Get()
	buildInfo.WithLabelValues(info.Version, info.Revision, info.GoVersion).Set(1)
}

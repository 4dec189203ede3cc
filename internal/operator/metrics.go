package operator

import (
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/version"
)

func init() {
	info := version.Get()
	metrics.BuildInfo.WithLabelValues(info.Version, info.Revision, info.GoVersion).Set(1)
}

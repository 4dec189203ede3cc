package cloudprovider

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Cloud-call metrics, served on the operator's metrics endpoint (docs/metrics.md).
var (
	calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_cloudprovider_calls_total",
		Help: "Calls made to the cloud's API, by provider, operation and result code (OK or an error code). A batch is one call.",
	}, []string{"provider", "operation", "code"})

	callDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "stratos_cloudprovider_call_duration_seconds",
		Help:    "Duration of calls to the cloud's API, by provider and operation.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"provider", "operation"})

	batchSize = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "stratos_cloudprovider_batch_size",
		Help:    "Instances carried by one call to the cloud's API, by provider and operation.",
		Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
	}, []string{"provider", "operation"})
)

func init() {
	crmetrics.Registry.MustRegister(calls, callDuration, batchSize)
}

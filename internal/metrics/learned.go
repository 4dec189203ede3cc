package metrics

import "github.com/prometheus/client_golang/prometheus"

// Learned warm pools (spec.standby.learned).
var (
	PoolDemandNodes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_nodepool_demand_nodes",
		Help: "Nodes a learned pool's pending pods needed (standby nodes started and new nodes launched for them), by pool and zone (empty when the launch named none): the demand recorded into its NodePoolDemand.",
	}, []string{"nodepool", "zone"})

	PoolForecastNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_forecast_nodes",
		Help: "A learned pool's demand forecast, in nodes, for the busiest interval within its warm-up ahead (status.learned.forecast).",
	}, []string{"nodepool"})

	PoolLearnedStandbyTarget = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_learned_standby_target",
		Help: "A learned pool's warm-pool target from its forecast, within standby.min, standby.max and its node limit (status.learned.target).",
	}, []string{"nodepool"})

	PoolLearnedPreStartNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_learned_prestart_nodes",
		Help: "Nodes a learned pool with preStart runs ahead of a confident peak (status.learned.running).",
	}, []string{"nodepool"})
)

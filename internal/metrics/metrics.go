// Package metrics defines every Prometheus metric Stratos serves, in one place, so that
// docs/metrics.md can be checked against it. They are registered with controller-runtime's
// registry and served on the operator's metrics endpoint.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Build.
var BuildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "stratos_build_info",
	Help: "Always 1; the labels name the running build's version, source revision and Go version.",
}, []string{"version", "revision", "goversion"})

// Cloud calls.
var (
	CloudCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_cloudprovider_calls_total",
		Help: "Calls made to the cloud's API, by provider, operation and result code (OK or an error code). A batch is one call.",
	}, []string{"provider", "operation", "code"})

	CloudCallDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "stratos_cloudprovider_call_duration_seconds",
		Help:    "Duration of calls to the cloud's API, by provider and operation.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"provider", "operation"})

	CloudBatchSize = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "stratos_cloudprovider_batch_size",
		Help:    "Instances carried by one call to the cloud's API, by provider and operation.",
		Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
	}, []string{"provider", "operation"})

	UnavailableOfferings = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_cloudprovider_unavailable_offerings",
		Help: "1 for each offering (instance type, zone, capacity type) that launches and starts avoid because the cloud refused it for lack of capacity, or interrupted a spot instance of it, within --unavailable-offering-ttl; the series goes when the mark expires.",
	}, []string{"instance_type", "zone", "capacity_type"})

	AWSAPICalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_aws_api_calls_total",
		Help: "Requests the EC2 provider sent to AWS, retries included, by service (EC2, SSM, IAM, Pricing), operation and code (OK, AWS's error code, or NoResponse).",
	}, []string{"service", "operation", "code"})

	OfferingsMarkedUnavailable = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_cloudprovider_offerings_marked_unavailable_total",
		Help: "Times an offering was marked unavailable after the cloud refused a launch or a start of it for lack of capacity, or interrupted a spot instance of it.",
	}, []string{"instance_type", "zone", "capacity_type"})
)

// NodeClaims.
var (
	PhaseTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_nodeclaim_phase_transitions_total",
		Help: "Phase changes of NodeClaims, by pool, phase left and phase entered.",
	}, []string{"nodepool", "from", "to"})

	PhaseDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "stratos_nodeclaim_phase_duration_seconds",
		Help:    "Time NodeClaims spent in a phase before they left it, by pool and phase.",
		Buckets: []float64{0.5, 1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 300, 600, 1800},
	}, []string{"nodepool", "phase"})

	NodeClaimsTerminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_nodeclaims_terminated_total",
		Help: "NodeClaims deleted by Stratos, by pool and reason (such as RegistrationTimeout, InitializationTimeout, WarmupTimeout, StartTimeout, StopTimeout, InstanceGone, Excess, Drifted, Expired, KillSwitch).",
	}, []string{"nodepool", "reason"})

	ForcedStops = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_nodeclaims_forced_stops_total",
		Help: "Stops of instances forced because they did not end within the stop timeout, by pool.",
	}, []string{"nodepool"})

	GarbageCollected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_garbage_collected_total",
		Help: "Leaks removed by garbage collection, by kind: instance (tagged as ours without a claim), nodeclaim (its instance is gone) or node (no claim).",
	}, []string{"kind"})
)

// NodePools.
var (
	PoolNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_nodes",
		Help: "NodeClaims of a pool, by phase.",
	}, []string{"nodepool", "phase"})

	PoolStandbyTarget = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_standby_target",
		Help: "Standby nodes a pool aims for now.",
	}, []string{"nodepool"})

	PoolStandbyNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_standby_nodes",
		Help: "NodeClaims of a pool standing by (phase Standby), by zone.",
	}, []string{"nodepool", "zone"})

	PoolStandbyHourlyCost = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_standby_hourly_cost_dollars",
		Help: "Estimated hourly cost in US dollars of a pool's standby nodes, by state: stopped (what they cost now, their disks) and running (what the same nodes would cost running, their offerings' prices).",
	}, []string{"nodepool", "state"})

	PoolLimit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_limit",
		Help: "A pool's limit on a resource, named as in its limits: cpu in cores, memory in bytes, nvidia.com/gpu and other resources in their units, nodes as a count (limits.nodes, or the active window's maxNodes). Only the resources the pool limits have a series.",
	}, []string{"nodepool", "resource"})

	PoolWarmupFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_nodepool_warmup_failures_total",
		Help: "A pool's claims removed because they did not warm up (WarmupTimeout) or did not register (RegistrationTimeout) in time, each counted once, by pool and reason. While they fail in a row the pool backs off from making standby claims.",
	}, []string{"nodepool", "reason"})

	PoolWarmupBackoff = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_warmup_backoff_seconds",
		Help: "How long from now a pool backing off after failed warm-ups waits before it makes a standby claim again; 0 when it does not back off or may try now.",
	}, []string{"nodepool"})

	PoolDegraded = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_degraded",
		Help: "A pool's Degraded condition: 1 while True, 0 while False, with the condition's reason (such as LimitReached, NodeClassNotReady, LaunchFailed, Paused; AsExpected when False). One series per pool.",
	}, []string{"nodepool", "reason"})

	PoolUsage = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_usage",
		Help: "What a pool's claims count against its limit on a resource, as the limits are enforced: cpu in cores, memory in bytes, nodes as a count.",
	}, []string{"nodepool", "resource"})

	PoolUnhealthyNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_nodepool_unhealthy_nodes",
		Help: "A pool's running nodes (claims Running or Draining) whose claim's Unhealthy condition is True, as the pool's repair defines health. While more than half of its running nodes are, repair is held back and the pool is Degraded with reason NodesUnhealthy.",
	}, []string{"nodepool"})
)

// Pod startup.
var PodStartupDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "stratos_pod_startup_duration_seconds",
	Help:    "Time from a pod's creation to a milestone (running: all its containers started; ready: its Ready condition True), for pods Stratos provisioned, by the path that served it: standby (a node started from standby for it), cold (a node launched for it), existing (a node that was already serving).",
	Buckets: []float64{1, 2, 3, 5, 7.5, 10, 12.5, 15, 20, 25, 30, 40, 50, 60, 75, 90, 120, 180, 300, 600},
}, []string{"path", "milestone"})

// Provisioning.
var (
	ProvisioningDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "stratos_provisioning_duration_seconds",
		Help:    "Duration of a provisioning decision, from the snapshot to the last intent written; a decision with no pod to place counts too.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	})

	SimulationDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "stratos_scheduling_simulation_duration_seconds",
		Help:    "Duration of the scheduling simulation of a provisioning decision.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	})

	ProvisioningDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_provisioning_decisions_total",
		Help: "Provisioning decisions, by outcome: launch (created claims), start (started standby claims, launched none), existing (every pod fits on nodes or claims already there), unschedulable (nothing to start or launch, and pods fit nowhere), idle (no pod to decide on), error (the decision failed).",
	}, []string{"outcome"})

	PodScope = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "stratos_pod_scope",
		Help: "1 for the pod scope in effect (all or opted-in: which pending pods provisioning serves) and its reason: flag (--pod-scope named it), karpenter or cluster-autoscaler (auto found one), none-found, not-permitted (auto may not look), starting (auto, before its first look).",
	}, []string{"scope", "reason"})

	ProvisioningPods = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_provisioning_pods_total",
		Help: "Pending pods decided on, by decision: existing (a node has room), inflight (a claim coming has room), start (a standby claim started), launch (a new claim), unschedulable.",
	}, []string{"decision"})

	DisruptionDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_disruption_decisions_total",
		Help: "Decisions to disrupt a node, by pool, reason (Empty, Underutilized, Drifted, Expired, Rebalance, Interrupted, Unhealthy) and outcome: standby (given back to the warm pool), terminate (asked to be terminated: it drains, then its claim and instance go), replace (replacements started before it drains), aborted (the node changed, or another writer won, before the write), blocked (a PodDisruptionBudget no longer let its pods go right before the write), error (the write failed).",
	}, []string{"nodepool", "reason", "outcome"})

	DrainsAbandoned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_disruption_drains_abandoned_total",
		Help: "Drains given up because PodDisruptionBudgets blocked them for longer than --abandon-blocked-drain-after, in pools without a terminationGracePeriod: the node runs again.",
	}, []string{"nodepool"})

	NodeRepairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_node_repairs_total",
		Help: "Unhealthy nodes repaired: asked to be terminated after their replacements ran (or at once, when none was needed), by pool and the reason of the claim's Unhealthy condition (NotReady, or the node condition's type).",
	}, []string{"nodepool", "reason"})

	DisruptionDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "stratos_disruption_duration_seconds",
		Help:    "Duration of one disruption pass over every pool.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	})

	ControllerPanics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_controller_panics_total",
		Help: "Passes of a singleton loop (provisioning, disruption) that panicked and were recovered; the loop carries on with the next pass.",
	}, []string{"controller"})
)

// All lists every Stratos metric.
var All = []prometheus.Collector{
	BuildInfo, CloudCalls, CloudCallDuration, CloudBatchSize,
	UnavailableOfferings, OfferingsMarkedUnavailable, AWSAPICalls,
	PhaseTransitions, PhaseDuration, NodeClaimsTerminated, ForcedStops, GarbageCollected,
	PoolNodes, PoolStandbyTarget, PoolStandbyNodes, PoolStandbyHourlyCost, PoolLimit, PoolUsage, PoolWarmupFailures, PoolWarmupBackoff, PoolDegraded, PoolUnhealthyNodes,
	PodStartupDuration,
	ProvisioningDuration, SimulationDuration, ProvisioningDecisions, ProvisioningPods, PodScope,
	DisruptionDecisions, DrainsAbandoned, NodeRepairs, DisruptionDuration, ControllerPanics,
	InterruptionMessagesReceived, InterruptionMessagesHandled, InterruptionMessageErrors, InterruptionNoticeLatency,
	PoolDemandNodes, PoolForecastNodes, PoolLearnedStandbyTarget, PoolLearnedPreStartNodes,
}

func init() {
	crmetrics.Registry.MustRegister(All...)
}

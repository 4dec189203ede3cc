package metrics

import "github.com/prometheus/client_golang/prometheus"

// Interruption notices (the cloud's notice queue).
var (
	InterruptionMessagesReceived = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_interruption_messages_received_total",
		Help: "Messages read from the cloud's notice queue, by kind: SpotInterruption, ScheduledChange, RebalanceRecommendation, StateChange, or malformed and foreign for those not understood.",
	}, []string{"kind"})

	InterruptionMessagesHandled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_interruption_messages_handled_total",
		Help: "What the interruption controller did for a notice's claim, by kind and action: marked (the claim records the interruption), cordoned (its Node cordoned), ignored (a rebalance its pool ignores, or a state change that needs nothing), recheck (the lifecycle controller asked to look at it), unmatched (no claim has the instance: not Stratos's).",
	}, []string{"kind", "action"})

	InterruptionMessageErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stratos_interruption_message_errors_total",
		Help: "Errors of the interruption controller, by reason: malformed and foreign (messages deleted unread), receive and delete (calls to the queue that failed), handle (acting on a notice failed; the message comes again).",
	}, []string{"reason"})

	InterruptionNoticeLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "stratos_interruption_notice_latency_seconds",
		Help:    "Time from a notice's time (the cloud's event time) to its message handled and deleted.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300},
	})
)

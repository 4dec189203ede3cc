package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// InterruptionKind is the kind of notice the cloud gave about a claim's instance.
// +kubebuilder:validation:Enum=SpotInterruption;ScheduledChange;RebalanceRecommendation
type InterruptionKind string

const (
	// InterruptionSpot: the cloud reclaims a spot instance (EC2 gives two minutes).
	InterruptionSpot InterruptionKind = "SpotInterruption"
	// InterruptionScheduledChange: the cloud will retire, stop or reboot the instance
	// for maintenance (an AWS Health scheduled change).
	InterruptionScheduledChange InterruptionKind = "ScheduledChange"
	// InterruptionRebalance: the instance is at elevated risk of interruption.
	InterruptionRebalance InterruptionKind = "RebalanceRecommendation"
)

// Interruption is the cloud's notice that a claim's instance will be, or may be, taken
// away.
type Interruption struct {
	// Kind of notice.
	// +required
	Kind InterruptionKind `json:"kind"`

	// NoticeTime is when the cloud gave the notice.
	// +required
	NoticeTime metav1.Time `json:"noticeTime"`

	// Deadline is when the cloud takes the instance away; the node's drain ends by
	// then. Unset for a rebalance recommendation, which sets no deadline.
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`
}

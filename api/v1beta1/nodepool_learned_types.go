package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// LearnedStandby configures a warm pool sized from the pool's demand history
// (NodePoolDemand): per interval of the day, the nodes its pending pods needed, per zone.
type LearnedStandby struct {
	// Percentile of the demand seen in the same interval of past days that the warm pool
	// is sized for; days further back count less (halfLife), and the same day of the
	// week counts more. Defaults to 90.
	// +optional
	// +kubebuilder:default=90
	// +kubebuilder:validation:Minimum=50
	// +kubebuilder:validation:Maximum=100
	Percentile int32 `json:"percentile,omitempty"`

	// Interval is the length of a history bucket: demand is recorded, and the target
	// set, per interval of the day. It divides a day. Defaults to 15m.
	// +optional
	// +kubebuilder:default="15m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('2h') && duration(self).getMilliseconds() % 60000 == 0 && 86400000 % duration(self).getMilliseconds() == 0",message="interval must be whole minutes from 1m to 2h that divide a day, such as 5m, 15m or 1h"
	Interval *Duration `json:"interval,omitempty"`

	// HalfLife is the age at which a day's demand counts half as much as today's.
	// Defaults to 168h (a week).
	// +optional
	// +kubebuilder:default="168h"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1h')",message="halfLife must be at least 1h"
	HalfLife *Duration `json:"halfLife,omitempty"`

	// TimeZone is the IANA time zone the days are read in, so that a daily peak at 09:00
	// stays at 09:00 across daylight saving. Defaults to UTC.
	// +optional
	// +kubebuilder:default=UTC
	TimeZone TimeZone `json:"timeZone,omitempty"`

	// PreStart, when set, also starts the forecast capacity shortly before a recurring
	// peak, so that its pods land on running nodes; the nodes go back to standby once
	// they are empty after it. Only a confident forecast starts nodes.
	// +optional
	PreStart *PreStart `json:"preStart,omitempty"`
}

// PreStart starts the forecast capacity ahead of a recurring peak.
type PreStart struct {
	// Lead is how long before the peak's interval begins the nodes run. Defaults to 2m.
	// +optional
	// +kubebuilder:default="2m"
	Lead *Duration `json:"lead,omitempty"`

	// MinDays is how many of the last seven days must have seen demand in the interval
	// for the forecast to be confident enough to start nodes. Defaults to 3.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=7
	MinDays int32 `json:"minDays,omitempty"`
}

// LearnedStatus explains the learned warm-pool target.
type LearnedStatus struct {
	// Target is the warm pool's learned size now: the forecast within standby.min,
	// standby.max and the limits.
	Target int32 `json:"target"`

	// Forecast is the demand forecast, in nodes, for the interval the target is set for.
	Forecast int32 `json:"forecast"`

	// Running is how many nodes the forecast starts ahead of a recurring peak
	// (standby.learned.preStart); 0 when it starts none.
	// +optional
	Running int32 `json:"running,omitempty"`

	// Bucket names the interval of the day the forecast is for, in the pool's time zone,
	// such as "Tue 09:00-09:15 Europe/Berlin".
	// +optional
	Bucket string `json:"bucket,omitempty"`

	// Percentile is the percentile taken, and Days how many days of history it drew on.
	// +optional
	Percentile int32 `json:"percentile,omitempty"`
	// +optional
	Days int32 `json:"days,omitempty"`

	// Lead is the pool's measured warm-up duration, by which the target is set ahead.
	// +optional
	Lead *Duration `json:"lead,omitempty"`

	// Message says why the target is what it is, in words.
	// +optional
	Message string `json:"message,omitempty"`

	// LastChangeTime is when the target last changed.
	// +optional
	LastChangeTime *metav1.Time `json:"lastChangeTime,omitempty"`
}

package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// NodePoolDemand is the demand history of a pool whose warm pool is learned
// (spec.standby.learned): per day and zone, how many nodes its pending pods needed in
// each interval of the day. There is one per such pool, named after it and owned by it.
// The operator records it and reads it back after a restart or a failover, so that the
// history lives in the API server rather than in one process's memory.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Interval",type="string",JSONPath=".spec.interval"
// +kubebuilder:printcolumn:name="Since",type="string",JSONPath=".spec.since"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type NodePoolDemand struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NodePoolDemandSpec `json:"spec"`
}

// NodePoolDemandSpec is the recorded history.
type NodePoolDemandSpec struct {
	// Interval is the bucket length the history is recorded in; a pool whose interval
	// changes starts its history anew.
	Interval Duration `json:"interval"`

	// TimeZone is the IANA time zone the days are read in. Unset: UTC.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// Since is the first day recorded (YYYY-MM-DD): a later day with no entry had no
	// demand.
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	Since string `json:"since"`

	// Days are the days with demand, oldest first; days older than the history keeps
	// are dropped. Empty: no demand since the history began.
	// +optional
	// +listType=map
	// +listMapKey=date
	// +kubebuilder:validation:MaxItems=120
	Days []DemandDay `json:"days,omitempty"`
}

// DemandDay is one day's demand.
type DemandDay struct {
	// Date is the day, YYYY-MM-DD, in the history's time zone.
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	Date string `json:"date"`

	// Zones hold the day's demand per zone ("" when the zone was not known).
	// +listType=map
	// +listMapKey=zone
	// +kubebuilder:validation:MaxItems=64
	Zones []ZoneDemand `json:"zones"`
}

// ZoneDemand is one zone's demand over a day.
type ZoneDemand struct {
	// Zone is the zone's name.
	Zone string `json:"zone"`

	// Intervals are the intervals of the day with demand.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1440
	Intervals []IntervalDemand `json:"intervals"`
}

// IntervalDemand is the demand in one interval of a day.
type IntervalDemand struct {
	// Index is the interval's number in the day, from 0 at midnight.
	// +kubebuilder:validation:Minimum=0
	Index int32 `json:"index"`

	// Nodes is how many nodes the pool's pending pods needed in the interval: standby
	// nodes started and new nodes launched for them.
	// +kubebuilder:validation:Minimum=0
	Nodes int32 `json:"nodes"`
}

// NodePoolDemandList is a list of NodePoolDemand.
//
// +kubebuilder:object:root=true
type NodePoolDemandList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePoolDemand `json:"items"`
}

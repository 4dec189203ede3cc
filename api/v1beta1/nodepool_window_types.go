package v1beta1

// Window overrides a pool's targets during a recurring time span, such as weekdays from
// 8 to 18 in Europe/Berlin. Days and hours may wrap around: fri-mon covers Friday to
// Monday and 22-6 covers 22:00 to 06:59.
//
// +kubebuilder:validation:XValidation:rule="has(self.minStandby) || has(self.minRunning) || has(self.maxNodes)",message="a window must override at least one of minStandby, minRunning or maxNodes"
type Window struct {
	// Name identifies the window in the pool's status and events.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="window name must be lowercase letters, digits and '-', such as office-hours"
	Name string `json:"name"`

	// Days the window is active: days (mon, tue, wed, thu, fri, sat, sun), inclusive
	// ranges such as mon-fri or fri-mon, or a comma list of both such as mon,wed,fri-sun.
	// Defaults to every day.
	// +optional
	// +kubebuilder:default="mon-sun"
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(mon|tue|wed|thu|fri|sat|sun)(-(mon|tue|wed|thu|fri|sat|sun))?(,(mon|tue|wed|thu|fri|sat|sun)(-(mon|tue|wed|thu|fri|sat|sun))?)*$')",message="days must be days (mon to sun), ranges such as mon-fri or fri-mon, or a comma list of both"
	Days string `json:"days,omitempty"`

	// Hours the window is active: hours from 0 to 23, inclusive ranges such as 9-17
	// (09:00 to 17:59) or 22-6 (wrapping past midnight), or a comma list of both.
	// Defaults to all day.
	// +optional
	// +kubebuilder:default="0-23"
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?(,([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)*$')",message="hours must be hours from 0 to 23, ranges such as 9-17 or 22-6, or a comma list of both"
	Hours string `json:"hours,omitempty"`

	// TimeZone the days and hours are read in, an IANA name. Defaults to UTC.
	// +optional
	// +kubebuilder:default=UTC
	TimeZone TimeZone `json:"timeZone,omitempty"`

	// MinStandby replaces standby.min while the window is active. Unset: standby.min holds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	MinStandby *int32 `json:"minStandby,omitempty"`

	// MinRunning keeps at least this many of the pool's nodes running while the window is
	// active, started ahead of the peak even without pending pods. Unset: no minimum.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	MinRunning *int32 `json:"minRunning,omitempty"`

	// PreWarm brings the window's minStandby and minRunning forward by this long, so that
	// nodes launched for the window have warmed up when it opens: the targets rise (never
	// fall) PreWarm before the window's start. MaxNodes still waits for the start.
	// Defaults to 10m; 0s turns it off.
	// +optional
	// +kubebuilder:default="10m"
	PreWarm *Duration `json:"preWarm,omitempty"`

	// MaxNodes replaces limits.nodes while the window is active; 0 scales the pool to zero.
	// Unset: limits.nodes holds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxNodes *int32 `json:"maxNodes,omitempty"`
}

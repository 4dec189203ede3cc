package v1beta1

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a length of time written the Go way: 30s, 10m, 1h30m, 1.5h. The API
// server rejects anything else, including lengths too long for Go (about 290 years), so
// controllers never meet one they cannot read.
//
// +kubebuilder:validation:Type=string
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') && duration(self) >= duration('0s')",message="must be a duration such as 30s, 10m or 1h30m"
type Duration struct {
	time.Duration `json:"-"`
}

// NewDuration returns d as an API duration.
func NewDuration(d time.Duration) *Duration { return &Duration{Duration: d} }

// MarshalJSON writes the duration as a string such as "1h30m0s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.Duration.String())
}

// UnmarshalJSON reads a duration string such as "90s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string: %w", err)
	}
	parsed, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = parsed
	return nil
}

// Never is the value of an ExpiryDuration that never expires.
const Never = "Never"

// ExpiryDuration is a duration or "Never".
//
// +kubebuilder:validation:Type=string
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:XValidation:rule="self == 'Never' || (self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') && duration(self) >= duration('0s'))",message="must be a duration such as 720h, or Never"
type ExpiryDuration struct {
	// Duration is nil for Never.
	Duration *time.Duration `json:"-"`
}

// MarshalJSON writes "Never" or the duration.
func (e ExpiryDuration) MarshalJSON() ([]byte, error) {
	if e.Duration == nil {
		return json.Marshal(Never)
	}
	return json.Marshal(e.Duration.String())
}

// UnmarshalJSON reads "Never" or a duration string.
func (e *ExpiryDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("expiry must be a string: %w", err)
	}
	if s == Never {
		e.Duration = nil
		return nil
	}
	parsed, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	e.Duration = &parsed
	return nil
}

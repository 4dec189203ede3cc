package forecast

import (
	"fmt"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/windows"
)

// Defaults of spec.standby.learned, for objects the API server has not defaulted (a
// client that sends the fields empty, or tests building pools in memory).
const (
	DefaultPercentile = 90
	DefaultInterval   = 15 * time.Minute
	DefaultHalfLife   = 168 * time.Hour
	DefaultPreStart   = 2 * time.Minute
	DefaultMinDays    = 3
)

// SettingsOf reads a pool's learned settings, defaults applied. It fails on a time zone
// this binary does not know (the schema checks only the name's form), or an interval
// that does not divide a day.
func SettingsOf(l *v1beta1.LearnedStandby) (Settings, error) {
	s := Settings{Percentile: l.Percentile, MinDays: DefaultMinDays}
	s.Interval, s.HalfLife = DefaultInterval, DefaultHalfLife
	if s.Percentile == 0 {
		s.Percentile = DefaultPercentile
	}
	if l.Interval != nil {
		s.Interval = l.Interval.Duration
	}
	if l.HalfLife != nil && l.HalfLife.Duration > 0 {
		s.HalfLife = l.HalfLife.Duration
	}
	if l.PreStart != nil && l.PreStart.MinDays > 0 {
		s.MinDays = l.PreStart.MinDays
	}
	if s.Interval < time.Minute || s.Interval%time.Minute != 0 || (24*time.Hour)%s.Interval != 0 {
		return s, fmt.Errorf("interval %s does not divide a day in whole minutes", s.Interval)
	}
	zone := string(l.TimeZone)
	if zone == "" {
		zone = "UTC"
	}
	loc, err := windows.Location(zone)
	if err != nil {
		return s, fmt.Errorf("time zone %q: %w", zone, err)
	}
	s.Location = loc
	return s, nil
}

// PreStartOf is how long before a confident peak its nodes run, or nil when the pool
// does not pre-start.
func PreStartOf(l *v1beta1.LearnedStandby) *time.Duration {
	if l.PreStart == nil {
		return nil
	}
	lead := DefaultPreStart
	if l.PreStart.Lead != nil {
		lead = l.PreStart.Lead.Duration
	}
	return &lead
}

// KeyAt is where demand seen at t is counted, in zone.
func (c Clock) KeyAt(t time.Time, zone string) Key {
	s := c.SlotAt(t)
	return Key{Date: s.Date, Zone: zone, Index: s.Index}
}

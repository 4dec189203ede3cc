package windows

import (
	"sync"
	"time"
)

// locations caches time zones by name: time.LoadLocation reads and parses the zone
// database on every call, and windows and budgets are read on every pass.
var locations sync.Map

// Location returns the IANA time zone name, loaded once per process.
func Location(name string) (*time.Location, error) {
	if loc, ok := locations.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	locations.Store(name, loc)
	return loc, nil
}

package report

import (
	"sort"
	"time"
)

// StandbyHours is the cost of a pool's warm pool: node-hours of standby claims over
// the operator's calendar time.
type StandbyHours struct {
	// NodeHours integrates the pool's standby claims (phase Standby) over calendar
	// time: between two observations, the count seen first times the calendar time
	// between them; across a setClock jump, the count held at the jump times the time
	// jumped, as a jump stands for hours skipped during which the pool held what it
	// held.
	NodeHours float64 `json:"nodeHours"`
	// Peak is the most standby claims the pool was seen holding at once.
	Peak int `json:"peak"`
}

// StandbyMeter integrates the standby claims of each pool over the calendar the
// simulator sets for the operator (setClock): from a setting on, the calendar runs at
// the time scale; before the first setting it runs on scenario time, and the first
// setting is not a jump, only where the calendar starts. It holds no lock: its caller
// serialises the calls.
type StandbyMeter struct {
	scale float64
	// The calendar read base at wall time baseAt; set once a setting came.
	base, baseAt time.Time
	set          bool

	observed bool
	at       time.Time // calendar time of the last observation
	held     map[string]int
	hours    map[string]*StandbyHours
}

// NewStandbyMeter returns a meter whose calendar starts, on scenario time, at wall time
// start and runs scale times as fast as real time.
func NewStandbyMeter(start time.Time, scale float64) *StandbyMeter {
	return &StandbyMeter{scale: scale, baseAt: start, held: map[string]int{}, hours: map[string]*StandbyHours{}}
}

// Calendar is the calendar's time at wall time.
func (m *StandbyMeter) Calendar(wall time.Time) time.Time {
	return m.base.Add(time.Duration(float64(wall.Sub(m.baseAt)) * m.scale))
}

// Observe records that at wall time each pool held standby[pool] standby claims (a
// pool missing from the map holds none). The calendar time since the last observation
// is charged at the counts seen then; an observation older than the last charges
// nothing.
func (m *StandbyMeter) Observe(wall time.Time, standby map[string]int) {
	at := m.Calendar(wall)
	if m.observed && at.After(m.at) {
		m.charge(at.Sub(m.at))
	}
	if !m.observed || at.After(m.at) {
		m.at = at
	}
	m.observed = true
	m.held = make(map[string]int, len(standby))
	for pool, n := range standby {
		m.held[pool] = n
		h := m.of(pool)
		h.Peak = max(h.Peak, n)
	}
}

// SetCalendar records that at wall time the calendar was set to to. The calendar time
// from the last observation up to the setting is charged at the counts seen then, and
// so is the time the setting skips forward; a setting backwards charges no skip. Call
// Observe just before, so that the counts held across the jump are those of the
// moment.
func (m *StandbyMeter) SetCalendar(wall, to time.Time) {
	if m.set && m.observed {
		if before := m.Calendar(wall); before.After(m.at) {
			m.charge(before.Sub(m.at))
			m.at = before
		}
		if to.After(m.at) {
			m.charge(to.Sub(m.at))
		}
	}
	m.base, m.baseAt, m.set = to, wall, true
	m.at = to
}

func (m *StandbyMeter) charge(d time.Duration) {
	for pool, n := range m.held {
		m.of(pool).NodeHours += float64(n) * d.Hours()
	}
}

func (m *StandbyMeter) of(pool string) *StandbyHours {
	h, ok := m.hours[pool]
	if !ok {
		h = &StandbyHours{}
		m.hours[pool] = h
	}
	return h
}

// Hours returns what each pool seen so far has cost, by pool name.
func (m *StandbyMeter) Hours() map[string]StandbyHours {
	all := make(map[string]StandbyHours, len(m.hours))
	for pool, h := range m.hours {
		all[pool] = *h
	}
	return all
}

// sortedPools lists the pools of a standby map in name order, for stable output.
func sortedPools(hours map[string]StandbyHours) []string {
	pools := make([]string, 0, len(hours))
	for pool := range hours {
		pools = append(pools, pool)
	}
	sort.Strings(pools)
	return pools
}

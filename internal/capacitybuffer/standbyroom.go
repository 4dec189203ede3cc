package capacitybuffer

import (
	"maps"
	"sync"
)

// StandbyRoom is what standby-capacity buffers ask of the warm pools: for each buffer
// (namespace/name), how many standby nodes of each pool its virtual pods need.
// Provisioning sets it; the nodepool controller adds each pool's sum to the pool's
// standby target, within standby.max and the pool's limits as any target. It lives in
// memory only: a new leader's first provisioning pass sets it again, and until then the
// warm pools keep the standby claims they have (the nodepool controller removes
// standby claims only above the pool's ceiling, which follows the target).
//
// It is safe for concurrent use; the zero value is not: use NewStandbyRoom. A nil
// *StandbyRoom is empty and ignores writes, so that controllers run without buffers.
type StandbyRoom struct {
	mu       sync.Mutex
	byBuffer map[string]map[string]int32
	onChange []func(pool string)
}

// NewStandbyRoom returns an empty registry.
func NewStandbyRoom() *StandbyRoom {
	return &StandbyRoom{byBuffer: map[string]map[string]int32{}}
}

// OnChange registers f, called with each pool whose sum changed, outside the lock.
func (s *StandbyRoom) OnChange(f func(pool string)) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChange = append(s.onChange, f)
}

// Set records the standby nodes per pool that buffer needs; an empty map forgets the
// buffer. Listeners hear of each pool whose sum changed, and only then.
func (s *StandbyRoom) Set(buffer string, perPool map[string]int32) {
	if s == nil {
		return
	}
	s.mu.Lock()
	before := s.byBuffer[buffer]
	var changed []string
	for pool, n := range perPool {
		if before[pool] != n {
			changed = append(changed, pool)
		}
	}
	for pool, n := range before {
		if _, still := perPool[pool]; !still && n != 0 {
			changed = append(changed, pool)
		}
	}
	if len(perPool) == 0 {
		delete(s.byBuffer, buffer)
	} else {
		s.byBuffer[buffer] = maps.Clone(perPool)
	}
	listeners := append([]func(string){}, s.onChange...)
	s.mu.Unlock()
	for _, pool := range changed {
		for _, f := range listeners {
			f(pool)
		}
	}
}

// Buffers returns the buffers recorded, so that those gone can be forgotten.
func (s *StandbyRoom) Buffers() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.byBuffer))
	for b := range s.byBuffer {
		out = append(out, b)
	}
	return out
}

// For is how many standby nodes of pool the buffers need, summed.
func (s *StandbyRoom) For(pool string) int32 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int32
	for _, perPool := range s.byBuffer {
		n += perPool[pool]
	}
	return n
}

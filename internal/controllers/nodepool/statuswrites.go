package nodepool

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// DefaultStatusWriteInterval is the least time between two writes of one pool's status:
// a burst moves claims through their phases many times a second, and each move changes
// the pool's counts, but a reader of the status needs no more than one change a second.
const DefaultStatusWriteInterval = time.Second

// statusWrites paces each pool's status writes. A pass whose status differs from the
// one written within the interval keeps it here, pending, instead of writing it; the
// pass after the interval writes the status it computes then. The pool's status is this
// controller's alone, so a pending status is the truth the next pass starts from (see
// begin): what the last pass decided, such as a warm-up failure it took from memory
// or a condition it announced with an Event, is neither lost nor announced again.
//
// The interval is measured on the real clock, not the controller's, because it paces
// the API server's load, which a simulated clock does not slow.
type statusWrites struct {
	mu      sync.Mutex
	last    map[string]time.Time
	pending map[string]*v1beta1.NodePoolStatus
	// unseen is the status last written of each pool, kept until the cache shows it, or
	// for unseenFor at most.
	unseen map[string]unseenStatus
	// now is time.Now outside unit tests.
	now func() time.Time
}

func (s *statusWrites) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// written is the status last written for the pool: the one the cache shows, or one
// this controller wrote that the cache does not show yet. A cache that lags behind a
// write (a loaded API server delivers watch events late) must not make a pass write
// the same status again, nor send an update from an old version only to be refused.
func (s *statusWrites) written(pool *v1beta1.NodePool) *v1beta1.NodePoolStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	if unseen, ok := s.unseen[pool.Name]; ok {
		if !equality.Semantic.DeepEqual(*unseen.status, pool.Status) && s.clock().Sub(unseen.at) < unseenFor {
			return unseen.status.DeepCopy()
		}
		delete(s.unseen, pool.Name)
	}
	return pool.Status.DeepCopy()
}

// unseenStatus is a status written at a time.
type unseenStatus struct {
	status *v1beta1.NodePoolStatus
	at     time.Time
}

// unseenFor bounds how long a written status stands for the cache's: well past any lag
// of a watch, and short enough that a status changed by someone else (the status is
// this controller's, but a person may edit it) is set right again.
const unseenFor = time.Minute

// begin sets the pool's status, as the cache shows it, to the one a pass starts from, and
// returns the status written last, which the pass compares its own with. A pass starts
// from the status held pending, if any, else from the one written last: started from a
// cache that has not caught up with a write, it would make a condition's change once
// more, with a new time, and write the status again.
func (s *statusWrites) begin(pool *v1beta1.NodePool) *v1beta1.NodePoolStatus {
	written := s.written(pool)
	pool.Status = *written.DeepCopy()
	s.mu.Lock()
	defer s.mu.Unlock()
	if pending, ok := s.pending[pool.Name]; ok {
		pool.Status = *pending.DeepCopy()
	}
	return written
}

// due returns how long the pool's next status write must wait: zero when it may go now.
func (s *statusWrites) due(pool string, interval time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.last[pool]
	if !ok {
		return 0
	}
	return max(interval-s.clock().Sub(last), 0)
}

// hold keeps status pending for the pool's next write.
func (s *statusWrites) hold(pool string, status *v1beta1.NodePoolStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]*v1beta1.NodePoolStatus{}
	}
	s.pending[pool] = status.DeepCopy()
}

// settled drops the pool's pending status: the cache shows the status the pass computed.
func (s *statusWrites) settled(pool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, pool)
}

// wrote records a write of the pool's status as it ends: the status written, or nil for
// a write that failed. A failed write loaded the API server too, and the pending
// status, if any, has gone with it or waits for the pass the failure requeues.
func (s *statusWrites) wrote(pool string, status *v1beta1.NodePoolStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]time.Time{}
	}
	s.last[pool] = s.clock()
	if status != nil {
		delete(s.pending, pool)
		if s.unseen == nil {
			s.unseen = map[string]unseenStatus{}
		}
		s.unseen[pool] = unseenStatus{status: status.DeepCopy(), at: s.clock()}
	}
}

// forget drops what is kept of a pool that is gone.
func (s *statusWrites) forget(pool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, pool)
	delete(s.pending, pool)
	delete(s.unseen, pool)
}

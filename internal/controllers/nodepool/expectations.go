package nodepool

import (
	"sync"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// expectationTTL bounds how long a pool waits for its cache to show a write it made.
const expectationTTL = time.Minute

// expectations remember the claims a pool created and deleted until the cache shows
// them, as Kubernetes's ReplicaSet controller does: planning on a cache that misses
// its own latest writes would create claims twice, or delete too many.
type expectations struct {
	mu      sync.Mutex
	pending map[string]map[string]expectation // pool → claim → what is expected
}

type expectation struct {
	deleted bool // false: the claim was created
	at      time.Time
}

func (e *expectations) expect(pool, claim string, deleted bool, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pending == nil {
		e.pending = map[string]map[string]expectation{}
	}
	if e.pending[pool] == nil {
		e.pending[pool] = map[string]expectation{}
	}
	e.pending[pool][claim] = expectation{deleted: deleted, at: now}
}

// met drops what the listed claims show and reports whether nothing is pending.
func (e *expectations) met(pool string, claims []v1beta1.NodeClaim, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	pending := e.pending[pool]
	if len(pending) == 0 {
		return true
	}
	listed := make(map[string]*v1beta1.NodeClaim, len(claims))
	for i := range claims {
		listed[claims[i].Name] = &claims[i]
	}
	for name, exp := range pending {
		claim, found := listed[name]
		seen := found && !exp.deleted || exp.deleted && (!found || !claim.DeletionTimestamp.IsZero())
		if seen || now.Sub(exp.at) > expectationTTL {
			delete(pending, name)
		}
	}
	return len(pending) == 0
}

// gone records that a claim of the pool is deleted: whatever was expected of it is met.
// A claim deleted soon after its creation (a standby launch out of capacity) may never
// be listed by a pass: its deletion is how the pool learns it was seen.
func (e *expectations) gone(pool, claim string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending[pool], claim)
}

// forget drops a deleted pool's expectations.
func (e *expectations) forget(pool string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending, pool)
}

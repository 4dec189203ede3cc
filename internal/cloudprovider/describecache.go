package cloudprovider

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// describeInterest is how long an instance asked about is kept in the describe cache and
// described again with the others: a claim waiting on its instance asks every poll
// interval (2 s, or 10 s with state-change notices), a settled one every resync (5 min).
const describeInterest = time.Minute

// describeCache keeps what the last describes said of each instance, so that the
// describes per interval do not grow with the number of instances. Each claim waiting on
// the cloud asks about its own instance every poll interval, at its own moment; without
// the cache each ask is a call. With it, a call describes, besides the instances asked
// for, every instance asked about within describeInterest, and for MaxAge after it each
// of them is answered from the cache: at most one call per MaxAge however many claims
// wait (more only when one call cannot carry them all, per MaxItems).
//
// An answer from the cache is at most MaxAge old. An instance this provider started,
// stopped or terminated is never answered with what a describe said before that action
// ended: the claim that acted waits for the change it asked for.
type describeCache struct {
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]describeEntry
	// changed holds when an action on an instance last ended.
	changed map[string]time.Time
}

type describeEntry struct {
	instance *Instance
	err      error
	// at is when the describe that said it began; asked when the instance was last
	// asked about.
	at, asked time.Time
}

func newDescribeCache(maxAge time.Duration, clk clock.PassiveClock) *describeCache {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &describeCache{maxAge: maxAge, now: clk.Now, entries: map[string]describeEntry{}, changed: map[string]time.Time{}}
}

// get answers from the cache when it may: the last describe of id began within maxAge
// and after the last action on it ended.
func (c *describeCache) get(id string) (*Instance, error, bool) {
	if c.maxAge <= 0 {
		return nil, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	e, ok := c.entries[id]
	if !ok {
		c.entries[id] = describeEntry{asked: now}
		return nil, nil, false
	}
	e.asked = now
	c.entries[id] = e
	if e.at.IsZero() || now.Sub(e.at) > c.maxAge || !e.at.After(c.changed[id]) {
		return nil, nil, false
	}
	return e.instance, e.err, true
}

// others lists, besides ids, the instances asked about within describeInterest that the
// call may refresh, up to room of them; it forgets those asked about longer ago.
func (c *describeCache) others(ids []string, room int) []string {
	if c.maxAge <= 0 || room <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	asked := make(map[string]bool, len(ids))
	for _, id := range ids {
		asked[id] = true
	}
	var out []string
	for id, e := range c.entries {
		switch {
		case now.Sub(e.asked) > describeInterest:
			delete(c.entries, id)
			delete(c.changed, id)
		case !asked[id] && len(out) < room:
			out = append(out, id)
		}
	}
	return out
}

// store records what a describe that began at said of an instance.
func (c *describeCache) store(id string, at time.Time, instance *Instance, err error) {
	if c.maxAge <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok || e.at.After(at) {
		return // forgotten meanwhile, or a later describe said more
	}
	e.instance, e.err, e.at = instance, err, at
	c.entries[id] = e
}

// acted records that an action on id ended: what describes said before is stale.
func (c *describeCache) acted(id string) {
	if c.maxAge <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[id]; ok {
		c.changed[id] = c.now()
	}
}

package nodepool

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of the bounds on the claims a pool creates: a typo in standby.min (10000 for
// 10) must not launch thousands of instances at once.
const (
	DefaultMaxCreationsPerPass   = 20
	DefaultMaxCreationsPerMinute = 60
)

// Options tune the nodepool controller.
type Options struct {
	// MaxCreationsPerPass bounds the claims one pass over a pool creates (standby
	// claims and a running minimum's launches together).
	MaxCreationsPerPass int
	// MaxCreationsPerMinute bounds the claims a pool creates per minute, as a token
	// bucket that holds a minute's worth.
	MaxCreationsPerMinute int
	// WarmupBackoff is how long a pool makes no standby claim after a warm-up or a
	// registration failed; it doubles at each failure in a row, up to WarmupBackoffMax.
	WarmupBackoff    time.Duration
	WarmupBackoffMax time.Duration
	// StatusWriteInterval is the least time between two writes of a pool's status;
	// DefaultStatusWriteInterval when zero.
	StatusWriteInterval time.Duration
}

// WithDefaults fills the options left at zero.
func (o Options) WithDefaults() Options {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.MaxCreationsPerPass, DefaultMaxCreationsPerPass)
	set(&o.MaxCreationsPerMinute, DefaultMaxCreationsPerMinute)
	if o.WarmupBackoff <= 0 {
		o.WarmupBackoff = DefaultWarmupBackoff
	}
	if o.WarmupBackoffMax <= 0 {
		o.WarmupBackoffMax = DefaultWarmupBackoffMax
	}
	if o.StatusWriteInterval <= 0 {
		o.StatusWriteInterval = DefaultStatusWriteInterval
	}
	return o
}

// creationLimits hold each pool's token bucket of claim creations.
type creationLimits struct {
	mu     sync.Mutex
	byPool map[string]*rate.Limiter
}

func (c *creationLimits) of(pool string, perMinute int) *rate.Limiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byPool == nil {
		c.byPool = map[string]*rate.Limiter{}
	}
	l, ok := c.byPool[pool]
	if !ok {
		l = rate.NewLimiter(rate.Every(time.Minute/time.Duration(perMinute)), perMinute)
		c.byPool[pool] = l
	}
	return l
}

// allowed is how many claims the pool may create in this pass at now.
func (c *creationLimits) allowed(pool string, o Options, now time.Time) int {
	tokens := int(c.of(pool, o.MaxCreationsPerMinute).TokensAt(now))
	return max(min(tokens, o.MaxCreationsPerPass), 0)
}

// spend takes n creations from the pool's bucket.
func (c *creationLimits) spend(pool string, o Options, now time.Time, n int) {
	if n > 0 {
		c.of(pool, o.MaxCreationsPerMinute).AllowN(now, n)
	}
}

// refill is how long until the pool's bucket holds one creation again.
func (o Options) refill() time.Duration { return time.Minute / time.Duration(o.MaxCreationsPerMinute) }

// forget drops a deleted pool's bucket.
func (c *creationLimits) forget(pool string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byPool, pool)
}

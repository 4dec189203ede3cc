package cloudprovider

import (
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"

	"github.com/stratos-sh/stratos/internal/metrics"
)

// DefaultUnavailableOfferingTTL is how long an offering the cloud refused for lack of
// capacity is avoided: long enough that a burst of launches does not hit the same empty
// pool again and again, short enough that capacity coming back is used soon. Karpenter
// keeps its insufficient-capacity cache for 3 minutes too.
const DefaultUnavailableOfferingTTL = 3 * time.Minute

// UnavailableOffering is an offering marked unavailable, until Expires.
type UnavailableOffering struct {
	OfferingKey
	// Reason says how the cloud refused it, such as "Start: InsufficientCapacity".
	Reason string
	// Limit is the account limit that covers it, such as VcpuLimitExceeded, when that
	// rather than a lack of capacity is why it is avoided.
	Limit   string
	Expires time.Time
}

// UnavailableOfferings remembers, for a TTL, the offerings the cloud refused for lack of
// capacity, or because an account limit covers them. Clouds do not say in advance that a zone ran out of a type (EC2's
// DescribeInstanceTypeOfferings does not); a refused launch or start is how we learn it.
// The marks live in memory only: after a restart the first refusal teaches them again.
//
// Every mark is the gauge stratos_cloudprovider_unavailable_offerings, set while it lasts
// and deleted when it expires, by a timer on the clock and by any read of the marks. The
// gauge is one per process, so an operator runs one UnavailableOfferings. It is safe for
// concurrent use.
type UnavailableOfferings struct {
	ttl   time.Duration
	clock clock.WithDelayedExecution
	// marks decides expiry; it cannot list its keys, so marked keeps them.
	marks *cache.Expiring

	mu sync.Mutex
	// marked are the keys set in marks and in the gauge, expired or not.
	marked map[OfferingKey]struct{}

	// swept, when set, is called after each sweep a mark's timer makes, for tests.
	swept func()
}

// NewUnavailableOfferings returns an empty cache whose marks last ttl on clk; a nil clk
// is the real clock and a ttl of zero or less is DefaultUnavailableOfferingTTL.
func NewUnavailableOfferings(ttl time.Duration, clk clock.WithDelayedExecution) *UnavailableOfferings {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if ttl <= 0 {
		ttl = DefaultUnavailableOfferingTTL
	}
	return &UnavailableOfferings{
		ttl:    ttl,
		clock:  clk,
		marks:  cache.NewExpiringWithClock(clk),
		marked: map[OfferingKey]struct{}{},
	}
}

// Mark makes key unavailable for the TTL from now, extending an earlier mark.
func (u *UnavailableOfferings) Mark(key OfferingKey, reason string) {
	u.mark(UnavailableOffering{OfferingKey: key, Reason: reason})
}

// MarkLimited makes key unavailable for the TTL from now because op ran into the
// account limit that covers it: the offering has capacity, but the account may not use
// more of it. Its TTL is the same: a limit raised, or instances of the account
// terminated, make room again without Stratos being told.
func (u *UnavailableOfferings) MarkLimited(key OfferingKey, op, limit string) {
	u.mark(UnavailableOffering{OfferingKey: key, Reason: op + ": " + limit, Limit: limit})
}

func (u *UnavailableOfferings) mark(mark UnavailableOffering) {
	key := mark.OfferingKey
	u.mu.Lock()
	defer u.mu.Unlock()
	mark.Expires = u.clock.Now().Add(u.ttl)
	u.marks.Set(key, mark, u.ttl)
	u.marked[key] = struct{}{}
	labels := offeringLabels(key)
	metrics.UnavailableOfferings.WithLabelValues(labels...).Set(1)
	metrics.OfferingsMarkedUnavailable.WithLabelValues(labels...).Inc()
	// Reads sweep expired marks out of the gauge, but no read may come for a long while
	// when nothing is pending; the timer sweeps when this mark expires. It sweeps in a
	// goroutine of its own because a fake clock runs the function holding its lock, which
	// the sweep needs to read the time.
	u.clock.AfterFunc(u.ttl, func() { go u.sweep() })
}

func (u *UnavailableOfferings) sweep() {
	u.List()
	if u.swept != nil {
		u.swept()
	}
}

// IsUnavailable reports whether key is marked now.
func (u *UnavailableOfferings) IsUnavailable(key OfferingKey) bool {
	_, ok := u.marks.Get(key)
	return ok
}

// List returns the marks that hold now, ordered by key, and forgets the expired ones.
func (u *UnavailableOfferings) List() []UnavailableOffering {
	u.mu.Lock()
	defer u.mu.Unlock()
	var list []UnavailableOffering
	for key := range u.marked {
		mark, ok := u.marks.Get(key)
		if !ok {
			delete(u.marked, key)
			metrics.UnavailableOfferings.DeleteLabelValues(offeringLabels(key)...)
			continue
		}
		list = append(list, mark.(UnavailableOffering))
	}
	sort.Slice(list, func(a, b int) bool { return lessKey(list[a].OfferingKey, list[b].OfferingKey) })
	return list
}

// Keys returns the keys List returns.
func (u *UnavailableOfferings) Keys() []OfferingKey {
	list := u.List()
	keys := make([]OfferingKey, len(list))
	for n, mark := range list {
		keys[n] = mark.OfferingKey
	}
	return keys
}

// Overlay returns types with the offerings marked now turned unavailable. The types it
// changes are copies: the cloud's answer may be cached and shared.
func (u *UnavailableOfferings) Overlay(types []*InstanceType) []*InstanceType {
	marks := u.List()
	if len(marks) == 0 {
		return types
	}
	marked := make(map[OfferingKey]bool, len(marks))
	for _, mark := range marks {
		marked[mark.OfferingKey] = true
	}
	out := make([]*InstanceType, len(types))
	for n, t := range types {
		out[n] = t
		for m, o := range t.Offerings {
			if !o.Available || !marked[t.Key(o)] {
				continue
			}
			if out[n] == t {
				c := *t
				c.Offerings = slices.Clone(t.Offerings)
				out[n] = &c
			}
			out[n].Offerings[m].Available = false
		}
	}
	return out
}

func offeringLabels(key OfferingKey) []string {
	return []string{key.InstanceType, key.Zone, key.CapacityType}
}

func lessKey(a, b OfferingKey) bool {
	if a.InstanceType != b.InstanceType {
		return a.InstanceType < b.InstanceType
	}
	if a.Zone != b.Zone {
		return a.Zone < b.Zone
	}
	return a.CapacityType < b.CapacityType
}

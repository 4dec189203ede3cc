package fakecloud

import (
	"maps"
	"slices"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Faults are failures injected into the cloud's calls. Maps are keyed by operation name:
// cloudprovider.OpCreate, OpStart, OpStop, OpTerminate, OpGet (DescribeInstances) and
// OpList (ListInstances).
type Faults struct {
	// Errors make a share of an operation's calls fail as a whole.
	Errors map[string]ErrorFault
	// RateLimits throttle an operation's calls beyond a rate, as EC2's request limits do.
	RateLimits map[string]RateLimit
	// InsufficientCapacity lists offerings the cloud has no capacity for.
	InsufficientCapacity []Offering
	// NeverRegister is the probability, from 0 to 1, that a launched instance's kubelet
	// never registers a Node.
	NeverRegister float64
	// AccountLimits refuse launches of the offerings they cover, as EC2's account
	// limits do.
	AccountLimits []AccountLimit
	// StopsHang is the probability, from 0 to 1, that a stop never ends: the instance
	// stays stopping until a forced stop (ForceStopInstances) ends it.
	StopsHang float64
	// ForcedStopsHang is the probability, from 0 to 1, that even a forced stop never
	// ends: the instance stays stopping until it is terminated.
	ForcedStopsHang float64
}

// AccountLimit is an account limit reached: a launch whose cheapest offering it covers
// fails with QuotaExceeded naming the limit, and names every offering of the launch it
// covers, as EC2's answer to a fleet does (one error per override), so that the caller
// can launch outside the limit next time.
type AccountLimit struct {
	// Limit is the limit's name in the error, such as VcpuLimitExceeded.
	Limit string
	// TypePrefixes are the instance types it covers, by the start of their names (c, m
	// and r for those of EC2's standard vCPU group here); none covers every type.
	TypePrefixes []string
	// CapacityType it covers; empty covers both.
	CapacityType string
}

func (l AccountLimit) covers(key cloudprovider.OfferingKey) bool {
	if l.CapacityType != "" && l.CapacityType != key.CapacityType {
		return false
	}
	return len(l.TypePrefixes) == 0 || slices.ContainsFunc(l.TypePrefixes, func(p string) bool { return strings.HasPrefix(key.InstanceType, p) })
}

// accountLimitOn is the first account limit that covers the offering, if any. The
// caller holds the lock.
func (c *Cloud) accountLimitOn(key cloudprovider.OfferingKey) (AccountLimit, bool) {
	for _, l := range c.faults.AccountLimits {
		if l.covers(key) {
			return l, true
		}
	}
	return AccountLimit{}, false
}

// ErrorFault fails calls at random.
type ErrorFault struct {
	// Probability that a call fails, from 0 to 1.
	Probability float64
	// Code the failing calls return; CodeInternal when empty.
	Code cloudprovider.ErrorCode
}

// RateLimit is a token bucket: PerSecond calls refill it, it holds Burst calls.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// Offering names an instance type in a zone, of a capacity type; an empty field matches
// any.
type Offering struct {
	InstanceType string
	Zone         string
	// CapacityType (spot or on-demand) lets a fault take one capacity type away, as EC2
	// runs out of spot capacity while it still sells on-demand.
	CapacityType string
}

func (o Offering) matches(key cloudprovider.OfferingKey) bool {
	return (o.InstanceType == "" || o.InstanceType == key.InstanceType) && (o.Zone == "" || o.Zone == key.Zone) &&
		(o.CapacityType == "" || o.CapacityType == key.CapacityType)
}

func (f Faults) clone() Faults {
	f.Errors = maps.Clone(f.Errors)
	f.RateLimits = maps.Clone(f.RateLimits)
	f.InsufficientCapacity = slices.Clone(f.InsufficientCapacity)
	f.AccountLimits = slices.Clone(f.AccountLimits)
	return f
}

// SetFaults replaces the injected faults. Rate limits start with full buckets.
func (c *Cloud) SetFaults(f Faults) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = f.clone()
	c.limiters = map[string]*rate.Limiter{}
	for op, l := range f.RateLimits {
		c.limiters[op] = rate.NewLimiter(rate.Limit(l.PerSecond), l.Burst)
	}
}

// Faults returns the injected faults.
func (c *Cloud) Faults() Faults {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.faults.clone()
}

// beginCall counts a call of op and returns the error an injected fault fails it with,
// if any. The rate limit comes first: a throttled call never reaches the service.
func (c *Cloud) beginCall(op string, now time.Time) error {
	c.calls[op]++
	if l := c.limiters[op]; l != nil && !l.AllowN(now, 1) {
		return cloudprovider.NewError(cloudprovider.CodeThrottled, op, "", "request limit exceeded (injected)")
	}
	if e, ok := c.faults.Errors[op]; ok && c.roll(e.Probability) {
		code := e.Code
		if code == "" {
			code = cloudprovider.CodeInternal
		}
		return cloudprovider.NewError(code, op, "", "injected fault")
	}
	return nil
}

// classFault returns the error a node class's faults fail op with for one instance, if any.
func (c *Cloud) classFault(f *v1beta1.FakeFaults, op, instanceID string) error {
	if f == nil {
		return nil
	}
	for _, e := range f.Errors {
		if string(e.Operation) != op || !c.roll(float64(e.Percent)/100) {
			continue
		}
		code := cloudprovider.ErrorCode(e.Error)
		if code == "" {
			code = cloudprovider.CodeInternal
		}
		return cloudprovider.NewError(code, op, instanceID, "injected fault of the node class")
	}
	return nil
}

// outOfCapacity reports whether the cloud's or the node class's faults take the offering away.
func (c *Cloud) outOfCapacity(f *v1beta1.FakeFaults, key cloudprovider.OfferingKey) bool {
	for _, o := range c.faults.InsufficientCapacity {
		if o.matches(key) {
			return true
		}
	}
	if f == nil {
		return false
	}
	for _, o := range f.InsufficientCapacity {
		if (Offering{InstanceType: o.InstanceType, Zone: o.Zone}).matches(key) {
			return true
		}
	}
	return false
}

// neverRegisters rolls whether a new instance's kubelet will never register.
func (c *Cloud) neverRegisters(f *v1beta1.FakeFaults) bool {
	if c.roll(c.faults.NeverRegister) {
		return true
	}
	return f != nil && c.roll(float64(f.NeverRegisterPercent)/100)
}

// roll returns true with probability p. Certain outcomes draw no number, so that faults
// set to 0 do not shift the seeded sequence.
func (c *Cloud) roll(p float64) bool {
	switch {
	case p <= 0:
		return false
	case p >= 1:
		return true
	default:
		return c.rng.Float64() < p
	}
}

// imagePullErrors are the images whose every pull fails on a node class's instances.
func imagePullErrors(f *v1beta1.FakeFaults) []string {
	if f == nil {
		return nil
	}
	return f.ImagePullErrors
}

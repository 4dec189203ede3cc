package nodeclaim

import (
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// launchBackoffJitter is the share of each retry's delay added at random, so that the
// claims of a burst that failed together (a throttled or failing cloud) do not retry in
// step and fail together again.
const launchBackoffJitter = 0.2

// launchBackoff spaces the retries of each claim's failing launches: the first after
// base, each later one twice the one before, up to max, each with up to 20% added at
// random. A claim's schedule starts again once it launches or is removed. It is safe
// for concurrent use.
type launchBackoff struct {
	base, max time.Duration

	mu sync.Mutex
	// claims holds the schedule of each claim whose launch is failing, by UID.
	claims map[types.UID]*retrySchedule
}

// retrySchedule is one claim's place in its backoff, and the earliest time it may try
// again: a claim is woken by more than its requeue (its own status write, a change of
// its pool), and such a wake-up must not launch early.
type retrySchedule struct {
	backoff   wait.Backoff
	notBefore time.Time
}

func newLaunchBackoff(base, max time.Duration) *launchBackoff {
	return &launchBackoff{base: base, max: max, claims: map[types.UID]*retrySchedule{}}
}

// failed records a failed launch of the claim at now and returns how long the claim
// waits before its next attempt.
func (b *launchBackoff) failed(claim types.UID, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	schedule, ok := b.claims[claim]
	if !ok {
		// Steps only keeps the doubling going; the cap stops it.
		schedule = &retrySchedule{backoff: wait.Backoff{Duration: b.base, Factor: 2, Jitter: launchBackoffJitter, Cap: b.max, Steps: math.MaxInt32}}
		b.claims[claim] = schedule
	}
	delay := schedule.backoff.Step()
	schedule.notBefore = now.Add(delay)
	return delay
}

// wait returns how long the claim has still to wait at now before it may try to launch
// again; zero when it may now.
func (b *launchBackoff) wait(claim types.UID, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if schedule, ok := b.claims[claim]; ok && now.Before(schedule.notBefore) {
		return schedule.notBefore.Sub(now)
	}
	return 0
}

// forget ends the claim's schedule: its next failure waits base again.
func (b *launchBackoff) forget(claim types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.claims, claim)
}

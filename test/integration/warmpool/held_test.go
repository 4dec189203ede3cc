package warmpool_test

import (
	"testing"
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// standbyByZone counts the pool's claims standing by, by zone.
func (f *fixture) standbyByZone(pool string) map[string]int {
	counts := map[string]int{}
	for _, c := range f.Claims(pool) {
		if c.Spec.DesiredState == v1beta1.DesiredStandby && c.Status.Phase == v1beta1.PhaseStandby && c.DeletionTimestamp.IsZero() {
			counts[c.Status.Zone]++
		}
	}
	return counts
}

// A standby node whose zone has no capacity to start it is held: the pool makes up its
// share in the other zones and keeps it. Once the offering's mark expires it counts
// again, and the pool trims the excess from the zones that made up for it, back to one
// per zone.
func TestAZoneThatCannotStartIsMadeUpElsewhereThenRebalanced(t *testing.T) {
	f := newFixture(t, nil)
	f.Op.Stop()
	f.Opts.UnavailableOfferingTTL = 5 * time.Second
	f.Op = stack.StartOperator(t, f.Env, f.Cloud, f.Opts)
	f.Pool("held", 3, nil)
	claims := f.WaitForPhase("held", 3, v1beta1.PhaseStandby)
	var inA string
	for _, c := range claims {
		if c.Status.Zone == "fake-1a" {
			inA = c.Name
		}
	}
	if inA == "" {
		t.Fatalf("no standby node in fake-1a: %v", zoneCounts(claims))
	}

	f.Cloud.SetFaults(fakecloud.Faults{InsufficientCapacity: []fakecloud.Offering{{Zone: "fake-1a"}}})
	f.SetDesired(inA, v1beta1.DesiredRunning)
	f.Eventually("the pool makes up fake-1a's standby node in the other zones and keeps it", func() bool {
		counts := f.standbyByZone("held")
		return counts["fake-1a"] == 1 && counts["fake-1b"]+counts["fake-1c"] == 3
	})

	f.Cloud.SetFaults(fakecloud.Faults{})
	f.Eventually("once the mark expires, one standby node per zone again", func() bool {
		counts := f.standbyByZone("held")
		return len(f.Claims("held")) == 3 && counts["fake-1a"] == 1 && counts["fake-1b"] == 1 && counts["fake-1c"] == 1
	})
	f.CheckInvariants()
}

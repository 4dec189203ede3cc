package warmpool_test

import (
	"fmt"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"

	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
)

// A typo in standby.min (100 for 1) does not create a hundred claims at once: the pool
// creates at most its allowance per pass, and per minute what its bucket holds, here 4
// a pass and 6 a minute (one every ten seconds once the bucket is empty). On main
// before the change, the pool created all hundred claims in its first pass.
func TestATypoInStandbyMinCreatesClaimsAtABoundedPace(t *testing.T) {
	f := newFixture(t, nil)
	f.Opts.NodePool = nodepool.Options{MaxCreationsPerPass: 4, MaxCreationsPerMinute: 6}
	f.RestartOperator(f.Opts)
	created := time.Now()
	f.Pool("typo-min", 100, nil)

	// The bucket holds six and refills one claim every ten seconds: whenever the test
	// looks, however slowly it runs, the pool has no more than that.
	withinBucket := func() bool {
		return len(f.Claims("typo-min")) <= 6+int(time.Since(created)/(10*time.Second))
	}
	f.Eventually("the pool spent its bucket", func() bool { return len(f.Claims("typo-min")) >= 6 })
	f.consistently("the pool creates no more than its bucket holds", time.Second, withinBucket)
	for _, note := range f.scaledUpNotes("typo-min") {
		var n, target int
		if _, err := fmt.Sscanf(note, "Created %d standby claims to reach %d", &n, &target); err != nil || n > 4 {
			t.Errorf("ScaledUp Event %q; want at most 4 claims a pass", note)
		}
	}
}

// scaledUpNotes lists the notes of the pool's ScaledUp Events.
func (f *fixture) scaledUpNotes(pool string) []string {
	f.T.Helper()
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events); err != nil {
		f.T.Fatal(err)
	}
	var notes []string
	for _, e := range events.Items {
		if e.Regarding.Name == pool && e.Reason == "ScaledUp" {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

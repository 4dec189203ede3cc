package stack

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// NewFixtureWithCalendar is NewFixture whose operator reads windows and learned warm
// pools on a fake calendar set to at, which the test moves with MoveCalendar.
func NewFixtureWithCalendar(t *testing.T, at time.Time) (*Fixture, *clocktesting.FakePassiveClock) {
	f := NewFixture(t, nil)
	calendar := clocktesting.NewFakePassiveClock(at)
	f.Opts.Calendar = calendar
	f.RestartOperator(f.Opts)
	return f, calendar
}

// MoveCalendar sets the calendar and touches the pool, so that it is looked at now
// rather than when its requeue, timed on the real clock, comes.
func MoveCalendar(f *Fixture, calendar *clocktesting.FakePassiveClock, pool string, at time.Time) {
	f.T.Helper()
	calendar.SetTime(at)
	Patch(f, &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pool}}, func(p *v1beta1.NodePool) {
		p.Annotations = map[string]string{"example.com/poke": at.String()}
	})
}

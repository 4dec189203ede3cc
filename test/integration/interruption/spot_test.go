package interruption_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/interruption"
	"github.com/stratos-sh/stratos/test/stack"
)

// disruptionPasses is how many disruption passes this process has made.
func disruptionPasses(t *testing.T) uint64 {
	return stack.Metric(t, "stratos_disruption_duration_seconds", nil).GetHistogram().GetSampleCount()
}

// A spot interruption warning for a running claim's instance records the notice on the
// claim (status.interruption, the Interrupted condition, an Event naming the deadline),
// cordons its Node, makes its spot offering unavailable, wakes disruption, and deletes
// the message; the same warning delivered again changes nothing.
func TestASpotWarningInterruptsTheClaim(t *testing.T) {
	// Disruption passes once as it starts and then not for an hour, unless woken.
	passes := disruptionPasses(t)
	f := newFixture(t, func(o *stack.OperatorOptions) { o.Disruption.PollInterval = time.Hour })
	f.Eventually("disruption made its first pass", func() bool { return disruptionPasses(t) > passes })
	claim := f.runningClaim("spot-warned", v1beta1.CapacityTypeSpot, func(p *v1beta1.NodePool) {
		p.Spec.Disruption.ConsolidateAfter = v1beta1.NewDuration(time.Hour)
	})
	passes = disruptionPasses(t)
	offering := cloudprovider.OfferingKey{InstanceType: claim.Status.InstanceType, Zone: claim.Status.Zone, CapacityType: v1beta1.CapacityTypeSpot}
	if f.Op.Unavailable.IsUnavailable(offering) {
		t.Fatalf("offering %s is unavailable before the warning", offering)
	}
	spot := map[string]string{"kind": "SpotInterruption"}
	handled := func(action string) float64 {
		return counter(t, "messages_handled_total", map[string]string{"kind": "SpotInterruption", "action": action})
	}
	received, marked, cordoned, ignored := counter(t, "messages_received_total", spot), handled("marked"), handled("cordoned"), handled("ignored")
	latencies := latencyCount(t)

	wasCordoned := f.watchCordon(claim)
	versions := f.ClaimVersions(claim.Name)
	at := now()
	warning := spotWarning("spot-1", claim.Status.InstanceID, at)
	// EventBridge delivers at least once: the same event comes twice, in messages of its
	// own. They come in one receive, so that the second is handled before disruption,
	// woken by the first, may replace the node.
	f.waitDeleted(f.queue.post(warning, warning)...)

	got := f.interrupted(versions)
	want := v1beta1.Interruption{Kind: v1beta1.InterruptionSpot, NoticeTime: metav1.NewTime(at), Deadline: &metav1.Time{Time: at.Add(2 * time.Minute)}}
	if got.Status.Interruption == nil || got.Status.Interruption.Kind != want.Kind || !got.Status.Interruption.NoticeTime.Equal(&want.NoticeTime) ||
		got.Status.Interruption.Deadline == nil || !got.Status.Interruption.Deadline.Equal(want.Deadline) {
		t.Fatalf("status.interruption %+v, want %+v", got.Status.Interruption, want)
	}
	deadline := at.Add(2 * time.Minute).Format(time.RFC3339)
	cond := interruptedCondition(got)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "SpotInterruption" || !strings.Contains(cond.Message, deadline) {
		t.Fatalf("Interrupted condition %+v, want True, reason SpotInterruption, naming %s", cond, deadline)
	}
	f.Eventually("the Node is cordoned", wasCordoned)
	if !f.Op.Unavailable.IsUnavailable(offering) {
		t.Errorf("offering %s is not marked unavailable", offering)
	}
	if marks := f.Op.Unavailable.List(); len(marks) != 1 || marks[0].Reason != interruption.ReasonUnavailableOffering {
		t.Errorf("unavailable offerings %+v, want only %s for the interruption", marks, offering)
	}
	f.Eventually("the claim has an Interrupted Event naming the deadline", func() bool {
		note, ok := f.EventNote(claim.Name, interruption.ReasonInterrupted)
		return ok && strings.Contains(note, deadline)
	})
	f.Eventually("the Node has an Interrupted Event", func() bool { return f.EventSeen(claim.Status.NodeName, interruption.ReasonInterrupted) })
	f.Eventually("disruption is woken for a pass", func() bool { return disruptionPasses(t) > passes })
	if n := counter(t, "messages_received_total", spot) - received; n != 2 {
		t.Errorf("received{SpotInterruption} rose by %v, want 2", n)
	}
	if n := handled("cordoned") - cordoned; n != 1 {
		t.Errorf("handled{SpotInterruption,cordoned} rose by %v, want 1", n)
	}
	if n := latencyCount(t) - latencies; n != 2 {
		t.Errorf("the notice latency histogram saw %d notices, want 2", n)
	}
	if n := handled("ignored") - ignored; n != 1 {
		t.Errorf("handled{SpotInterruption,ignored} rose by %v for the warning delivered again, want 1", n)
	}
	if n := handled("marked") - marked; n != 1 {
		t.Errorf("handled{SpotInterruption,marked} rose by %v for the warning that came twice, want 1", n)
	}
}

// A scheduled change records its start as the deadline and cordons the Node, but marks
// no offering unavailable: the offering is not short of capacity.
func TestAScheduledChangeInterruptsTheClaim(t *testing.T) {
	f := newFixture(t, nil)
	claim := f.runningClaim("retiring", v1beta1.CapacityTypeOnDemand, nil)
	wasCordoned := f.watchCordon(claim)
	versions := f.ClaimVersions(claim.Name)
	at, start := now(), now().Add(72*time.Hour)
	f.waitDeleted(f.queue.post(scheduledChange("health-1", at, start, claim.Status.InstanceID))...)

	got := f.interrupted(versions)
	if got.Status.Interruption == nil || got.Status.Interruption.Kind != v1beta1.InterruptionScheduledChange ||
		got.Status.Interruption.Deadline == nil || !got.Status.Interruption.Deadline.Time.Equal(start) {
		t.Fatalf("status.interruption %+v, want a ScheduledChange with deadline %s", got.Status.Interruption, start)
	}
	if cond := interruptedCondition(got); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "ScheduledChange" {
		t.Fatalf("Interrupted condition %+v, want True, reason ScheduledChange", cond)
	}
	f.Eventually("the Node is cordoned", wasCordoned)
	if marks := f.Op.Unavailable.List(); len(marks) != 0 {
		t.Errorf("a scheduled change marked offerings unavailable: %+v", marks)
	}
}

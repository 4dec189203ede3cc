package interruption_test

import (
	"testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Messages that are not notices Stratos reads — not JSON, an event without its fields,
// another source's event, an AWS Health issue — and notices about instances no claim
// has are deleted and counted; the controller goes on reading, and a spot warning after
// them is handled.
func TestMessagesStratosCannotUseAreDeletedAndCounted(t *testing.T) {
	f := newFixture(t, nil)
	claim := f.runningClaim("unreadable", v1beta1.CapacityTypeSpot, nil)
	malformed, foreign := map[string]string{"kind": "malformed"}, map[string]string{"kind": "foreign"}
	unmatched := map[string]string{"kind": "SpotInterruption", "action": "unmatched"}
	before := map[string]float64{
		"received malformed": counter(t, "messages_received_total", malformed),
		"received foreign":   counter(t, "messages_received_total", foreign),
		"error malformed":    counter(t, "message_errors_total", map[string]string{"reason": "malformed"}),
		"error foreign":      counter(t, "message_errors_total", map[string]string{"reason": "foreign"}),
		"unmatched":          counter(t, "messages_handled_total", unmatched),
	}
	at := now()
	ids := f.queue.post(
		[]byte("this is not JSON"),
		[]byte(`{"version":"0","id":"no-detail","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","time":"`+at.Format("2006-01-02T15:04:05Z")+`"}`),
		eventBody("asg-1", "aws.autoscaling", "EC2 Instance-terminate Lifecycle Action", at, nil, map[string]string{"EC2InstanceId": claim.Status.InstanceID}),
		eventBody("health-issue", "aws.health", "AWS Health Event", at, nil, map[string]any{
			"service": "EC2", "eventTypeCategory": "issue", "affectedEntities": []map[string]string{{"entityValue": claim.Status.InstanceID}},
		}),
		spotWarning("someone-elses", "i-0123456789abcdef0", at),
	)
	f.waitDeleted(ids...)
	after := map[string]float64{
		"received malformed": counter(t, "messages_received_total", malformed),
		"received foreign":   counter(t, "messages_received_total", foreign),
		"error malformed":    counter(t, "message_errors_total", map[string]string{"reason": "malformed"}),
		"error foreign":      counter(t, "message_errors_total", map[string]string{"reason": "foreign"}),
		"unmatched":          counter(t, "messages_handled_total", unmatched),
	}
	want := map[string]float64{"received malformed": 2, "received foreign": 2, "error malformed": 2, "error foreign": 2, "unmatched": 1}
	for what, n := range want {
		if got := after[what] - before[what]; got != n {
			t.Errorf("%s rose by %v, want %v", what, got, n)
		}
	}
	if got := f.Claim(claim.Name); got.Status.Interruption != nil || interruptedCondition(got) != nil {
		t.Fatalf("the claim was marked by messages not about it: %+v", got.Status)
	}

	// The controller still reads.
	versions := f.ClaimVersions(claim.Name)
	f.waitDeleted(f.queue.post(spotWarning("spot-after", claim.Status.InstanceID, now()))...)
	f.interrupted(versions)
}

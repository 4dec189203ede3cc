package interruption

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// The samples are shaped as AWS documents each event and delivers it to SQS through an
// EventBridge rule: the whole event, envelope and detail, as the message body.
const (
	spotWarning = `{
  "version": "0",
  "id": "1e5527d7-bb36-4607-3370-4164db56a40e",
  "detail-type": "EC2 Spot Instance Interruption Warning",
  "source": "aws.ec2",
  "account": "123456789012",
  "time": "2026-11-27T06:00:00Z",
  "region": "us-east-1",
  "resources": ["arn:aws:ec2:us-east-1b:instance/i-0b662ef9931388ba0"],
  "detail": {"instance-id": "i-0b662ef9931388ba0", "instance-action": "terminate"}
}`
	rebalance = `{
  "version": "0",
  "id": "5d5ae7a9-8a3a-4c3e-9d23-2b1f0e8f5a11",
  "detail-type": "EC2 Instance Rebalance Recommendation",
  "source": "aws.ec2",
  "account": "123456789012",
  "time": "2026-11-27T06:01:30Z",
  "region": "us-east-1",
  "resources": ["arn:aws:ec2:us-east-1b:instance/i-0aa1"],
  "detail": {"instance-id": "i-0aa1"}
}`
	stateChange = `{
  "version": "0",
  "id": "7bf73129-1428-4cd3-a780-95db273d1602",
  "detail-type": "EC2 Instance State-change Notification",
  "source": "aws.ec2",
  "account": "123456789012",
  "time": "2026-11-27T06:02:00Z",
  "region": "us-east-1",
  "resources": ["arn:aws:ec2:us-east-1:123456789012:instance/i-0bb2"],
  "detail": {"instance-id": "i-0bb2", "state": "terminated"}
}`
	scheduledChange = `{
  "version": "0",
  "id": "7fb65329-1628-4cf3-a740-95fg457h1402",
  "detail-type": "AWS Health Event",
  "source": "aws.health",
  "account": "123456789012",
  "time": "2026-11-27T06:03:00Z",
  "region": "us-east-1",
  "resources": ["i-0cc3", "i-0dd4"],
  "detail": {
    "eventArn": "arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_1",
    "service": "EC2",
    "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
    "eventTypeCategory": "scheduledChange",
    "startTime": "Fri, 04 Dec 2026 15:10:09 GMT",
    "eventDescription": [{"language": "en_US", "latestDescription": "The instance is scheduled for retirement."}],
    "affectedEntities": [{"entityValue": "i-0cc3", "tags": {"stage": "prod"}}, {"entityValue": "i-0dd4"}]
  }
}`
	healthIssue = `{
  "version": "0", "id": "9a8b", "detail-type": "AWS Health Event", "source": "aws.health",
  "account": "123456789012", "time": "2026-11-27T06:04:00Z", "region": "us-east-1", "resources": [],
  "detail": {"service": "EC2", "eventTypeCategory": "issue", "affectedEntities": [{"entityValue": "i-0ee5"}]}
}`
	healthOtherService = `{
  "version": "0", "id": "9a8c", "detail-type": "AWS Health Event", "source": "aws.health",
  "account": "123456789012", "time": "2026-11-27T06:04:00Z", "region": "us-east-1", "resources": [],
  "detail": {"service": "RDS", "eventTypeCategory": "scheduledChange", "affectedEntities": [{"entityValue": "db-1"}]}
}`
	autoScalingEvent = `{
  "version": "0", "id": "3e3c153a", "detail-type": "EC2 Instance-terminate Lifecycle Action", "source": "aws.autoscaling",
  "account": "123456789012", "time": "2026-11-27T06:05:00Z", "region": "us-east-1", "resources": [],
  "detail": {"EC2InstanceId": "i-0ff6", "LifecycleTransition": "autoscaling:EC2_INSTANCE_TERMINATING"}
}`
	// s3TestEvent is what S3 posts to a queue it is told to notify: JSON, not an event.
	s3TestEvent = `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-11-27T06:06:00.000Z","Bucket":"b"}`
)

func at(value string) time.Time {
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseReadsEachKind(t *testing.T) {
	cases := []struct {
		name string
		body string
		want Notice
	}{
		{"spot interruption warning", spotWarning, Notice{
			Kind: SpotInterruption, ID: "1e5527d7-bb36-4607-3370-4164db56a40e", InstanceIDs: []string{"i-0b662ef9931388ba0"},
			Time: at("2026-11-27T06:00:00Z"), Deadline: at("2026-11-27T06:02:00Z"), Action: "terminate",
		}},
		{"rebalance recommendation", rebalance, Notice{
			Kind: Rebalance, ID: "5d5ae7a9-8a3a-4c3e-9d23-2b1f0e8f5a11", InstanceIDs: []string{"i-0aa1"}, Time: at("2026-11-27T06:01:30Z"),
		}},
		{"state change", stateChange, Notice{
			Kind: StateChange, ID: "7bf73129-1428-4cd3-a780-95db273d1602", InstanceIDs: []string{"i-0bb2"}, Time: at("2026-11-27T06:02:00Z"), State: "terminated",
		}},
		{"scheduled change", scheduledChange, Notice{
			Kind: ScheduledChange, ID: "7fb65329-1628-4cf3-a740-95fg457h1402", InstanceIDs: []string{"i-0cc3", "i-0dd4"},
			Time: at("2026-11-27T06:03:00Z"), Deadline: at("2026-12-04T15:10:09Z"),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if !same(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func same(a, b Notice) bool {
	return a.Kind == b.Kind && a.ID == b.ID && slices.Equal(a.InstanceIDs, b.InstanceIDs) && a.Time.Equal(b.Time) &&
		a.Deadline.Equal(b.Deadline) && a.Action == b.Action && a.State == b.State
}

// A scheduled change without a start time has no deadline; one written as RFC 3339 is
// read too.
func TestScheduledChangeDeadline(t *testing.T) {
	withoutStart := `{"version":"0","id":"h1","detail-type":"AWS Health Event","source":"aws.health","time":"2026-11-27T06:03:00Z",
		"detail":{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"i-1"}]}}`
	got, err := Parse([]byte(withoutStart))
	if err != nil || !got.Deadline.IsZero() {
		t.Fatalf("without startTime: deadline %v, error %v; want no deadline and no error", got.Deadline, err)
	}
	rfc3339 := `{"version":"0","id":"h2","detail-type":"AWS Health Event","source":"aws.health","time":"2026-11-27T06:03:00Z",
		"detail":{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"2026-12-01T10:00:00Z","affectedEntities":[{"entityValue":"i-1"}]}}`
	got, err = Parse([]byte(rfc3339))
	if err != nil || !got.Deadline.Equal(at("2026-12-01T10:00:00Z")) {
		t.Fatalf("RFC 3339 startTime: deadline %v, error %v", got.Deadline, err)
	}
}

func TestParseTellsMalformedFromForeign(t *testing.T) {
	cases := []struct {
		name string
		body string
		want error
	}{
		{"not JSON", `not json at all`, ErrMalformed},
		{"empty", ``, ErrMalformed},
		{"a JSON array", `[1,2]`, ErrMalformed},
		{"JSON but not an event", s3TestEvent, ErrMalformed},
		{"no id", `{"detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","time":"2026-11-27T06:00:00Z","detail":{"instance-id":"i-1"}}`, ErrMalformed},
		{"no time", `{"id":"a","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","detail":{"instance-id":"i-1"}}`, ErrMalformed},
		{"a time not RFC 3339", `{"id":"a","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","time":"yesterday","detail":{"instance-id":"i-1"}}`, ErrMalformed},
		{"no detail", `{"id":"a","detail-type":"EC2 Instance Rebalance Recommendation","source":"aws.ec2","time":"2026-11-27T06:00:00Z"}`, ErrMalformed},
		{"no instance id", `{"id":"a","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","time":"2026-11-27T06:00:00Z","detail":{"instance-action":"terminate"}}`, ErrMalformed},
		{"an instance id not a string", `{"id":"a","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","time":"2026-11-27T06:00:00Z","detail":{"instance-id":42}}`, ErrMalformed},
		{"a state change without a state", `{"id":"a","detail-type":"EC2 Instance State-change Notification","source":"aws.ec2","time":"2026-11-27T06:00:00Z","detail":{"instance-id":"i-1"}}`, ErrMalformed},
		{"a scheduled change without instances", `{"id":"a","detail-type":"AWS Health Event","source":"aws.health","time":"2026-11-27T06:00:00Z","detail":{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":[]}}`, ErrMalformed},
		{"a scheduled change with an unreadable start", `{"id":"a","detail-type":"AWS Health Event","source":"aws.health","time":"2026-11-27T06:00:00Z","detail":{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"soon","affectedEntities":[{"entityValue":"i-1"}]}}`, ErrMalformed},
		{"another source", autoScalingEvent, ErrForeign},
		{"an EC2 event Stratos does not read", `{"id":"a","detail-type":"EBS Volume Notification","source":"aws.ec2","time":"2026-11-27T06:00:00Z","detail":{}}`, ErrForeign},
		{"a Health issue, not a scheduled change", healthIssue, ErrForeign},
		{"a Health event of another service", healthOtherService, ErrForeign},
		{"a spot warning's detail-type from another source", `{"id":"a","detail-type":"EC2 Spot Instance Interruption Warning","source":"custom.app","time":"2026-11-27T06:00:00Z","detail":{"instance-id":"i-1"}}`, ErrForeign},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			notice, err := Parse([]byte(tc.body))
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v (notice %+v)", err, tc.want, notice)
			}
			other := ErrForeign
			if tc.want == ErrForeign {
				other = ErrMalformed
			}
			if errors.Is(err, other) {
				t.Fatalf("error %v is both malformed and foreign", err)
			}
		})
	}
}

// Parse never panics, and either returns a notice with every field its kind needs or an
// error that says which of the two kinds of refusal it is.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{spotWarning, rebalance, stateChange, scheduledChange, healthIssue, healthOtherService, autoScalingEvent, s3TestEvent, `{}`, `null`, `"x"`, `{"detail":null}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		notice, err := Parse(body)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrForeign) {
				t.Fatalf("error %v is neither malformed nor foreign", err)
			}
			return
		}
		if notice.ID == "" || notice.Time.IsZero() || len(notice.InstanceIDs) == 0 || slices.Contains(notice.InstanceIDs, "") {
			t.Fatalf("notice %+v lacks an id, a time or an instance", notice)
		}
		switch notice.Kind {
		case SpotInterruption:
			if !notice.Deadline.Equal(notice.Time.Add(SpotNoticePeriod)) {
				t.Fatalf("spot notice %+v: deadline not two minutes after the notice", notice)
			}
		case StateChange:
			if notice.State == "" {
				t.Fatalf("state change %+v without a state", notice)
			}
		case Rebalance:
			if !notice.Deadline.IsZero() {
				t.Fatalf("rebalance %+v with a deadline", notice)
			}
		case ScheduledChange:
		default:
			t.Fatalf("notice %+v of no kind", notice)
		}
	})
}

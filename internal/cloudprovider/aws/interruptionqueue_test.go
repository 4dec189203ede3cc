package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/sim/moto"
	"github.com/stratos-sh/stratos/test/harness"
)

// queueEnv is a moto SQS queue set up as deploy/interruption sets it up on AWS: the
// queue, and one EventBridge rule per pattern file of deploy/interruption/patterns
// targeting it.
type queueEnv struct {
	clients  *Clients
	server   *moto.Server
	events   *eventbridge.Client
	name     string
	url, arn string
}

// testQueueName is the queue every test creates.
const testQueueName = "stratos-test-cluster"

// testQueueOptions keep the tests' long polls short: moto serves one request at a time
// through the test proxy, and an empty receive waits the whole poll.
var testQueueOptions = QueueOptions{WaitTime: time.Second, VisibilityTimeout: 30 * time.Second}

func newQueueEnv(t *testing.T) *queueEnv {
	t.Helper()
	clients, server := newTestClients(t)
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(moto.Region))
	if err != nil {
		t.Fatal(err)
	}
	e := &queueEnv{
		clients: clients, server: server, name: testQueueName,
		events: eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(server.Endpoint) }),
	}
	// The attributes of interruption-queue.cfn.yaml's queue.
	created, err := clients.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(e.name), Attributes: map[string]string{
		string(sqstypes.QueueAttributeNameMessageRetentionPeriod): "300",
		string(sqstypes.QueueAttributeNameSqsManagedSseEnabled):   "true",
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.url = aws.ToString(created.QueueUrl)
	attrs, err := clients.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: created.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	e.arn = attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	for name, pattern := range documentedPatterns(t) {
		if _, err := e.events.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("stratos-" + name), EventPattern: aws.String(pattern)}); err != nil {
			t.Fatalf("rule %s: %v", name, err)
		}
		out, err := e.events.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("stratos-" + name), Targets: []ebtypes.Target{{Id: aws.String("StratosInterruptionQueue"), Arn: aws.String(e.arn)}}})
		if err != nil || out.FailedEntryCount != 0 {
			t.Fatalf("target of rule %s: %v %+v", name, err, out)
		}
	}
	return e
}

// documentedPatterns are the event patterns of deploy/interruption/patterns by file
// name: those the CloudFormation template and the Terraform module use.
func documentedPatterns(t *testing.T) map[string]string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy", "interruption", "patterns", "*.json"))
	if err != nil || len(files) != 4 {
		t.Fatalf("want the four pattern files of deploy/interruption/patterns, found %v (%v)", files, err)
	}
	patterns := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		patterns[strings.TrimSuffix(filepath.Base(f), ".json")] = string(data)
	}
	return patterns
}

// open opens the env's queue as the operator would, given queue (a name or URL).
func (e *queueEnv) open(t *testing.T, queue string) *InterruptionQueue {
	t.Helper()
	q, err := OpenInterruptionQueue(context.Background(), e.clients.SQS, queue, testQueueOptions)
	if err != nil {
		t.Fatalf("opening %q: %v", queue, err)
	}
	return q
}

// ec2Event is an event as EC2 or AWS Health posts it to EventBridge.
type ec2Event struct {
	source, detailType, detail string
	resources                  []string
}

// noticeTime is when the test's events happened, as EventBridge stamps them.
var noticeTime = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

// The four kinds of notice Stratos reads, with the details AWS documents for them.
var noticeEvents = []ec2Event{
	{source: "aws.ec2", detailType: "EC2 Spot Instance Interruption Warning", detail: `{"instance-id":"i-0000000000000000a","instance-action":"terminate"}`,
		resources: []string{"arn:aws:ec2:us-east-1:123456789012:instance/i-0000000000000000a"}},
	{source: "aws.ec2", detailType: "EC2 Instance Rebalance Recommendation", detail: `{"instance-id":"i-0000000000000000b"}`,
		resources: []string{"arn:aws:ec2:us-east-1:123456789012:instance/i-0000000000000000b"}},
	{source: "aws.ec2", detailType: "EC2 Instance State-change Notification", detail: `{"instance-id":"i-0000000000000000c","state":"stopping"}`,
		resources: []string{"arn:aws:ec2:us-east-1:123456789012:instance/i-0000000000000000c"}},
	{source: "aws.health", detailType: "AWS Health Event", detail: `{"eventArn":"arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_1","service":"EC2",` +
		`"eventTypeCode":"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED","eventTypeCategory":"scheduledChange","startTime":"Sat, 05 Dec 2026 06:00:00 GMT",` +
		`"eventDescription":[{"language":"en_US","latestDescription":"retirement"}],"affectedEntities":[{"entityValue":"i-0000000000000000d"}]}`},
}

// Events the rules must not send: other EC2 events and Health events of other kinds.
var unrelatedEvents = []ec2Event{
	{source: "aws.ec2", detailType: "EC2 Fleet Instance Change", detail: `{"instance-id":"i-0000000000000000e"}`},
	{source: "aws.health", detailType: "AWS Health Event", detail: `{"service":"EC2","eventTypeCategory":"issue","affectedEntities":[{"entityValue":"i-0000000000000000f"}]}`},
	{source: "aws.health", detailType: "AWS Health Event", detail: `{"service":"RDS","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"db-1"}]}`},
}

// publish posts events to the default bus, as EC2 and AWS Health would.
func (e *queueEnv) publish(t *testing.T, events ...ec2Event) {
	t.Helper()
	var entries []ebtypes.PutEventsRequestEntry
	for _, ev := range events {
		entries = append(entries, ebtypes.PutEventsRequestEntry{
			Source: aws.String(ev.source), DetailType: aws.String(ev.detailType), Detail: aws.String(ev.detail),
			Resources: ev.resources, Time: aws.Time(noticeTime),
		})
	}
	out, err := e.events.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: entries})
	if err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("PutEvents: %v %+v", err, out)
	}
}

// eventBridgeEnvelope is the part of an EventBridge event the test checks, decoded here
// rather than with internal/interruption so that the check shares no code with it.
type eventBridgeEnvelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Time       time.Time       `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// receiveAll receives until want messages came or a receive comes back empty.
func receiveAll(t *testing.T, q cloudprovider.NoticeQueue, want int) []cloudprovider.QueueMessage {
	t.Helper()
	var got []cloudprovider.QueueMessage
	for len(got) < want {
		msgs, err := q.Receive(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		got = append(got, msgs...)
	}
	return got
}

// Each kind of notice, posted as EC2 posts it, reaches the queue through the documented
// rules as EventBridge's JSON; events of other kinds do not. Deleted, they are gone.
func TestInterruptionQueueReceivesTheDocumentedNotices(t *testing.T) {
	e := newQueueEnv(t)
	q := e.open(t, e.name)
	e.publish(t, append(slices.Clone(noticeEvents), unrelatedEvents...)...)

	msgs := receiveAll(t, q, len(noticeEvents)+len(unrelatedEvents))
	if len(msgs) != len(noticeEvents) {
		t.Fatalf("received %d messages, want the %d notices and none of the unrelated events: %s", len(msgs), len(noticeEvents), bodies(msgs))
	}
	byType := map[string]eventBridgeEnvelope{}
	for _, m := range msgs {
		if m.ID == "" || m.Handle == "" {
			t.Errorf("message %+v lacks its ID or receipt handle", m)
		}
		var env eventBridgeEnvelope
		if err := json.Unmarshal(m.Body, &env); err != nil {
			t.Fatalf("body is not an EventBridge event: %v\n%s", err, m.Body)
		}
		byType[env.DetailType] = env
		t.Logf("received %s", m.Body)
	}
	for _, want := range noticeEvents {
		env, ok := byType[want.detailType]
		if !ok {
			t.Errorf("no %q message came: %s", want.detailType, bodies(msgs))
			continue
		}
		if env.Source != want.source || env.Version != "0" || env.ID == "" || env.Region != moto.Region || !env.Time.Equal(noticeTime) {
			t.Errorf("%s: envelope %+v, want source %s, version 0, an id, region %s, time %s", want.detailType, env, want.source, moto.Region, noticeTime)
		}
		if !slices.Equal(env.Resources, want.resources) && (len(env.Resources) != 0 || len(want.resources) != 0) {
			t.Errorf("%s: resources %v, want %v", want.detailType, env.Resources, want.resources)
		}
		if !jsonEqual(t, env.Detail, want.detail) {
			t.Errorf("%s: detail %s, want %s", want.detailType, env.Detail, want.detail)
		}
	}

	if err := q.Delete(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	if again, err := q.Receive(context.Background()); err != nil || len(again) != 0 {
		t.Fatalf("after the delete a receive gave %s (%v), want nothing", bodies(again), err)
	}
	// Deleting again, as a handler retrying after a failed delete would, is no error;
	// nor is a list naming a message twice (moto, unlike AWS, refuses a batch that
	// repeats a receipt handle, so this also shows Delete sends each once).
	if err := q.Delete(context.Background(), append(slices.Clone(msgs), msgs...)); err != nil {
		t.Errorf("deleting deleted messages: %v", err)
	}
}

// A message received and not deleted comes again once its visibility timeout passes,
// so that a notice whose handling failed is handled again.
func TestUndeletedNoticeComesAgain(t *testing.T) {
	e := newQueueEnv(t)
	q, err := OpenInterruptionQueue(context.Background(), e.clients.SQS, e.name, QueueOptions{WaitTime: 5 * time.Second, VisibilityTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.publish(t, noticeEvents[0])
	first := receiveAll(t, q, 1)
	if len(first) != 1 {
		t.Fatalf("received %d messages, want 1", len(first))
	}
	// The long poll waits for the message to be visible again.
	second := receiveAll(t, q, 1)
	if len(second) != 1 || second[0].ID != first[0].ID || string(second[0].Body) != string(first[0].Body) {
		t.Fatalf("after the visibility timeout a receive gave %s, want message %s again", bodies(second), first[0].ID)
	}
}

// The queue given by name is resolved to its URL; given by URL it is used as it is.
// Either way the same queue is read.
func TestInterruptionQueueByNameOrURL(t *testing.T) {
	e := newQueueEnv(t)
	byName, byURL := e.open(t, e.name), e.open(t, e.url)
	if byName.URL() != e.url || byURL.URL() != e.url {
		t.Fatalf("by name the queue is %s, by URL %s; want both %s", byName.URL(), byURL.URL(), e.url)
	}
	for _, q := range []*InterruptionQueue{byName, byURL} {
		e.publish(t, noticeEvents[1])
		msgs := receiveAll(t, q, 1)
		if len(msgs) != 1 || !strings.Contains(string(msgs[0].Body), noticeEvents[1].detailType) {
			t.Fatalf("queue %s received %s, want the rebalance recommendation", q.URL(), bodies(msgs))
		}
		if err := q.Delete(context.Background(), msgs); err != nil {
			t.Fatal(err)
		}
	}
}

// A queue that does not exist stops the opening with an error that says so and names
// the queue. (A URL naming another account is not checked here: moto ignores
// GetQueueUrl's QueueOwnerAWSAccountId, which AWS answers for; docs/interruptions.md.)
func TestMissingInterruptionQueueIsAnErrorAtOpen(t *testing.T) {
	e := newQueueEnv(t)
	for _, queue := range []string{"stratos-no-such-queue", strings.Replace(e.url, testQueueName, "stratos-no-such-queue", 1)} {
		_, err := OpenInterruptionQueue(context.Background(), e.clients.SQS, queue, testQueueOptions)
		if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), queue) {
			t.Errorf("opening %q: %v; want an error saying the queue does not exist", queue, err)
		}
	}
}

// The queue's calls are counted in stratos_aws_api_calls_total like EC2's.
func TestInterruptionQueueCallsAreCounted(t *testing.T) {
	e := newQueueEnv(t)
	calls := func(operation string) float64 {
		return testutil.ToFloat64(metrics.AWSAPICalls.WithLabelValues("SQS", operation, "OK"))
	}
	resolves, receives, deletes := calls("GetQueueUrl"), calls("ReceiveMessage"), calls("DeleteMessageBatch")
	q := e.open(t, e.name)
	e.publish(t, noticeEvents[2])
	msgs := receiveAll(t, q, 1)
	if err := q.Delete(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	if got := [3]float64{calls("GetQueueUrl") - resolves, calls("ReceiveMessage") - receives, calls("DeleteMessageBatch") - deletes}; got != [3]float64{1, 1, 1} {
		t.Errorf("counted GetQueueUrl, ReceiveMessage, DeleteMessageBatch %v; want one each", got)
	}
}

// A queue is named or given by URL; anything else is refused before any call.
func TestCheckQueue(t *testing.T) {
	for queue, ok := range map[string]bool{
		"stratos-prod":      true,
		"stratos_prod.fifo": true,
		"https://sqs.eu-west-1.amazonaws.com/111122223333/stratos-prod": true,
		"":                      false,
		"stratos prod":          false,
		strings.Repeat("q", 81): false,
		"arn:aws:sqs:eu-west-1:111122223333:stratos-prod":      false,
		"https://sqs.eu-west-1.amazonaws.com/stratos-prod":     false,
		"https://sqs.eu-west-1.amazonaws.com/111122223333/a/b": false,
		"https:///111122223333/stratos-prod":                   false,
	} {
		if err := CheckQueue(queue); (err == nil) != ok {
			t.Errorf("CheckQueue(%q) = %v, want ok %v", queue, err, ok)
		}
	}
}

// The cloud offers its queue as the operator looks for it, by the Notices method on
// the cloudprovider.API value, and offers none until it has one.
func TestCloudOffersItsInterruptionQueue(t *testing.T) {
	e := newQueueEnv(t)
	cloud := New(Options{ClusterName: testCluster}, e.clients)
	var api cloudprovider.API = cloud
	withNotices, ok := api.(interface {
		Notices() cloudprovider.NoticeQueue
	})
	if !ok {
		t.Fatal("the AWS cloud has no Notices method")
	}
	if n := withNotices.Notices(); n != nil {
		t.Fatalf("without a queue Notices is %v, want nil", n)
	}
	q := e.open(t, e.name)
	cloud.ReadNoticesFrom(q)
	if n := withNotices.Notices(); n != q {
		t.Fatalf("Notices is %v, want the queue opened", n)
	}
}

func bodies(msgs []cloudprovider.QueueMessage) string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Body))
	}
	return "[" + strings.Join(out, ",\n") + "]"
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		return false
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// More than ten messages are deleted in batches of ten, SQS's most.
func TestDeleteGoesInBatchesOfTen(t *testing.T) {
	e := newQueueEnv(t)
	q := e.open(t, e.name)
	var events []ec2Event
	for i := range 12 {
		ev := noticeEvents[2]
		ev.detail = fmt.Sprintf(`{"instance-id":"i-%017d","state":"running"}`, i)
		events = append(events, ev)
	}
	e.publish(t, events[:10]...) // PutEvents takes ten entries at most
	e.publish(t, events[10:]...)
	msgs := receiveAll(t, q, len(events))
	if len(msgs) != len(events) {
		t.Fatalf("received %d messages, want %d", len(msgs), len(events))
	}
	batches := func() float64 {
		return testutil.ToFloat64(metrics.AWSAPICalls.WithLabelValues("SQS", "DeleteMessageBatch", "OK"))
	}
	before := batches()
	if err := q.Delete(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	if got := batches() - before; got != 2 {
		t.Errorf("%v DeleteMessageBatch calls for %d messages, want 2", got, len(msgs))
	}
	if again, err := q.Receive(context.Background()); err != nil || len(again) != 0 {
		t.Fatalf("after the delete a receive gave %s (%v), want nothing", bodies(again), err)
	}
}

// An entry of a batch delete that SQS fails is an error naming its message; one failed
// as ReceiptHandleIsInvalid (a message deleted already) is not. moto fails entries only
// with ReceiptHandleIsInvalid, so a proxy in front of it answers the batch delete with
// both kinds of failure.
func TestDeleteReportsFailedEntries(t *testing.T) {
	e := newQueueEnv(t)
	target, err := url.Parse(e.server.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "AmazonSQS.DeleteMessageBatch" {
			forward.ServeHTTP(w, r)
			return
		}
		var in struct{ Entries []struct{ Id string } }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type entry struct {
			Id, Code, Message string `json:",omitempty"`
			SenderFault       bool
		}
		out := struct{ Successful, Failed []entry }{}
		for _, en := range in.Entries {
			switch en.Id {
			case "1":
				out.Failed = append(out.Failed, entry{Id: en.Id, Code: "InternalError", Message: "try again"})
			case "2":
				out.Failed = append(out.Failed, entry{Id: en.Id, Code: "ReceiptHandleIsInvalid", Message: "gone", SenderFault: true})
			default:
				out.Successful = append(out.Successful, entry{Id: en.Id})
			}
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(proxy.Close)
	clients, err := NewClients(context.Background(), Options{Region: moto.Region, Endpoint: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	q, err := OpenInterruptionQueue(context.Background(), clients.SQS, e.name, testQueueOptions)
	if err != nil {
		t.Fatal(err)
	}
	e.publish(t, noticeEvents[:3]...)
	msgs := receiveAll(t, q, 3)
	if len(msgs) != 3 {
		t.Fatalf("received %d messages, want 3", len(msgs))
	}
	err = q.Delete(context.Background(), msgs)
	if err == nil || !strings.Contains(err.Error(), msgs[1].ID) || !strings.Contains(err.Error(), "InternalError") {
		t.Fatalf("Delete gave %v; want an error naming message %s and InternalError", err, msgs[1].ID)
	}
	if strings.Contains(err.Error(), msgs[0].ID) || strings.Contains(err.Error(), msgs[2].ID) {
		t.Errorf("Delete's error %v names a message deleted or already gone", err)
	}
}

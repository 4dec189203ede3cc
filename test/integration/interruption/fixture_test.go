// Package interruption_test runs the interruption controller against a real
// kube-apiserver with the fake cloud's instances, reading a notice queue the test
// writes EventBridge events to, as EC2 and AWS Health post them to SQS. The tests run
// one after another: the interruption metrics are labelled by kind only, so that tests
// running side by side would count each other's messages.
package interruption_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// queue is a notice queue in memory that behaves as SQS does for the controller: a
// message received is invisible until it is deleted or redelivered (its visibility
// timeout passing, which the test decides), and Receive long-polls.
type queue struct {
	mu       sync.Mutex
	visible  []cloudprovider.QueueMessage
	inFlight map[string]cloudprovider.QueueMessage // by receipt handle
	deleted  map[string]bool                       // by message ID
	next     int
	arrived  chan struct{}
}

func newQueue() *queue {
	return &queue{inFlight: map[string]cloudprovider.QueueMessage{}, deleted: map[string]bool{}, arrived: make(chan struct{}, 1)}
}

// longPoll is how long Receive waits for a message before it returns none.
const longPoll = 200 * time.Millisecond

func (q *queue) Receive(ctx context.Context) ([]cloudprovider.QueueMessage, error) {
	timer := time.NewTimer(longPoll)
	defer timer.Stop()
	for {
		q.mu.Lock()
		if len(q.visible) > 0 {
			msgs := q.visible
			q.visible = nil
			for n := range msgs {
				q.next++
				msgs[n].Handle = "receipt-" + strconv.Itoa(q.next)
				q.inFlight[msgs[n].Handle] = msgs[n]
			}
			q.mu.Unlock()
			return msgs, nil
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, nil
		case <-q.arrived:
		}
	}
}

func (q *queue) Delete(_ context.Context, msgs []cloudprovider.QueueMessage) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		if held, ok := q.inFlight[m.Handle]; ok {
			delete(q.inFlight, m.Handle)
			q.deleted[held.ID] = true
		}
	}
	return nil
}

// post sends bodies, in one receive, and returns their message IDs.
func (q *queue) post(bodies ...[]byte) []string {
	q.mu.Lock()
	var ids []string
	for _, body := range bodies {
		q.next++
		id := "msg-" + strconv.Itoa(q.next)
		q.visible = append(q.visible, cloudprovider.QueueMessage{ID: id, Body: body})
		ids = append(ids, id)
	}
	q.mu.Unlock()
	select {
	case q.arrived <- struct{}{}:
	default:
	}
	return ids
}

// redeliver makes every message received and not deleted visible again, as SQS does
// once their visibility timeout passes.
func (q *queue) redeliver() {
	q.mu.Lock()
	for handle, m := range q.inFlight {
		delete(q.inFlight, handle)
		q.visible = append(q.visible, m)
	}
	q.mu.Unlock()
	select {
	case q.arrived <- struct{}{}:
	default:
	}
}

func (q *queue) isDeleted(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.deleted[id]
}

func (q *queue) isInFlight(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range q.inFlight {
		if m.ID == id {
			return true
		}
	}
	return false
}

// fixture is one test's cluster, whose operator reads the test's queue.
type fixture struct {
	*stack.Fixture
	queue *queue
}

// newFixture starts a cluster whose operator reads a queue of the test's; tune adjusts
// the operator's options.
func newFixture(t *testing.T, tune func(*stack.OperatorOptions)) *fixture {
	q := newQueue()
	f := stack.NewSerialFixtureWith(t, fakecloud.Options{}, func(o *stack.OperatorOptions) {
		o.Notices = q
		if tune != nil {
			tune(o)
		}
	})
	return &fixture{Fixture: f, queue: q}
}

// runningClaim launches a claim in a new pool, as provisioning does for pending pods,
// and waits until it runs. The pool's budget lets no voluntary disruption take the empty
// node away while the test looks at it.
func (f *fixture) runningClaim(pool, capacityType string, tune func(*v1beta1.NodePool)) *v1beta1.NodeClaim {
	f.T.Helper()
	p := f.Pool(pool, 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{capacityType}}}
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "0"}}
		if tune != nil {
			tune(p)
		}
	})
	claim := claimtemplate.NewClaim(p, v1beta1.DesiredRunning)
	f.Create(claim)
	running := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
	if running.Status.CapacityType != capacityType || running.Status.InstanceID == "" || running.Status.NodeName == "" {
		f.T.Fatalf("claim %s runs as %q on instance %q, Node %q; want %s with both", claim.Name, running.Status.CapacityType, running.Status.InstanceID, running.Status.NodeName, capacityType)
	}
	return running
}

// waitDeleted waits until the queue's messages are deleted.
func (f *fixture) waitDeleted(ids ...string) {
	f.T.Helper()
	for _, id := range ids {
		f.Eventually("message "+id+" is deleted", func() bool { return f.queue.isDeleted(id) })
	}
}

// interruptedCondition is the claim's Interrupted condition, or nil.
func interruptedCondition(claim *v1beta1.NodeClaim) *metav1.Condition {
	return meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionInterrupted)
}

func (f *fixture) node(claim *v1beta1.NodeClaim) *corev1.Node {
	f.T.Helper()
	node := &corev1.Node{}
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Name: claim.Status.NodeName}, node); err != nil {
		f.T.Fatal(err)
	}
	return node
}

// watchCordon watches the claim's Node from the version it has now and returns whether
// any version since was cordoned. A notice wakes disruption, which may drain an empty
// node and delete it before the test looks, so the test reads the cordon from the
// Node's history rather than from the Node it finds afterwards.
func (f *fixture) watchCordon(claim *v1beta1.NodeClaim) (cordoned func() bool) {
	f.T.Helper()
	node := f.node(claim)
	nodes := kubernetes.NewForConfigOrDie(f.Env.Config).CoreV1().Nodes()
	w, err := nodes.Watch(f.Ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + node.Name, ResourceVersion: node.ResourceVersion})
	if err != nil {
		f.T.Fatal(err)
	}
	f.T.Cleanup(w.Stop)
	var seen atomic.Bool
	go func() {
		for event := range w.ResultChan() {
			if n, ok := event.Object.(*corev1.Node); ok && n.Spec.Unschedulable {
				seen.Store(true)
			}
		}
	}()
	return seen.Load
}

// interrupted returns the first of the claim's versions (ClaimVersions) with
// status.interruption, once there is one: disruption, woken by the notice, may replace
// the node and delete the claim before a read could see it.
func (f *fixture) interrupted(versions func() []v1beta1.NodeClaim) *v1beta1.NodeClaim {
	f.T.Helper()
	return f.firstVersion(versions, "a version of the claim records an interruption", func(c *v1beta1.NodeClaim) bool { return c.Status.Interruption != nil })
}

// firstVersion waits for a version of the claim that matches, and returns the first.
func (f *fixture) firstVersion(versions func() []v1beta1.NodeClaim, what string, match func(*v1beta1.NodeClaim) bool) *v1beta1.NodeClaim {
	f.T.Helper()
	var first *v1beta1.NodeClaim
	f.Eventually(what, func() bool {
		for _, v := range versions() {
			if match(&v) {
				first = &v
				return true
			}
		}
		return false
	})
	return first
}

// counter reads an interruption counter's series.
func counter(t *testing.T, name string, labels map[string]string) float64 {
	return stack.Counter(t, "stratos_interruption_"+name, labels)
}

// latencyCount is how many notices the latency histogram has seen.
func latencyCount(t *testing.T) uint64 {
	return stack.Metric(t, "stratos_interruption_notice_latency_seconds", nil).GetHistogram().GetSampleCount()
}

// The events below are written as AWS documents them and EventBridge delivers them to
// SQS: the whole event is the message body.

// eventBody is an EventBridge event.
func eventBody(id, source, detailType string, at time.Time, resources []string, detail any) []byte {
	body, err := json.Marshal(map[string]any{
		"version": "0", "id": id, "detail-type": detailType, "source": source,
		"account": "123456789012", "time": at.UTC().Format(time.RFC3339), "region": "us-east-1",
		"resources": resources, "detail": detail,
	})
	if err != nil {
		panic(err)
	}
	return body
}

func instanceARN(id string) []string {
	return []string{"arn:aws:ec2:us-east-1:123456789012:instance/" + id}
}

func spotWarning(eventID, instanceID string, at time.Time) []byte {
	return eventBody(eventID, "aws.ec2", "EC2 Spot Instance Interruption Warning", at, instanceARN(instanceID),
		map[string]string{"instance-id": instanceID, "instance-action": "terminate"})
}

func rebalanceRecommendation(eventID, instanceID string, at time.Time) []byte {
	return eventBody(eventID, "aws.ec2", "EC2 Instance Rebalance Recommendation", at, instanceARN(instanceID),
		map[string]string{"instance-id": instanceID})
}

func stateChange(eventID, instanceID, state string, at time.Time) []byte {
	return eventBody(eventID, "aws.ec2", "EC2 Instance State-change Notification", at, instanceARN(instanceID),
		map[string]string{"instance-id": instanceID, "state": state})
}

// scheduledChange is an AWS Health scheduled change of EC2 instances, starting at start
// (written as AWS Health writes it, RFC 1123 in GMT).
func scheduledChange(eventID string, at, start time.Time, instanceIDs ...string) []byte {
	var entities []map[string]string
	for _, id := range instanceIDs {
		entities = append(entities, map[string]string{"entityValue": id})
	}
	return eventBody(eventID, "aws.health", "AWS Health Event", at, instanceIDs, map[string]any{
		"eventArn":          fmt.Sprintf("arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/%s", eventID),
		"service":           "EC2",
		"eventTypeCode":     "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
		"eventTypeCategory": "scheduledChange",
		"startTime":         start.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"),
		"eventDescription":  []map[string]string{{"language": "en_US", "latestDescription": "The instance is scheduled for retirement."}},
		"affectedEntities":  entities,
	})
}

// now is the time of a notice: EventBridge writes times to the second.
func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

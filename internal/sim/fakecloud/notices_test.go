package fakecloud

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
)

// receiveAsync calls Receive in a goroutine and waits until it blocks on the fake clock,
// so that the test can step the clock past its waits.
func receiveAsync(t *testing.T, q cloudprovider.NoticeQueue, clk *testingclock.FakeClock) <-chan []cloudprovider.QueueMessage {
	t.Helper()
	got := make(chan []cloudprovider.QueueMessage, 1)
	go func() {
		msgs, err := q.Receive(context.Background())
		if err != nil {
			t.Errorf("Receive: %v", err)
		}
		got <- msgs
	}()
	simtest.EventuallyWithin(t, 5*time.Second, "Receive to wait", func(context.Context) (bool, error) { return clk.HasWaiters(), nil })
	return got
}

// receiveNow receives at the current time; with messages visible, Receive does not wait.
func receiveNow(t *testing.T, q cloudprovider.NoticeQueue) []cloudprovider.QueueMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	msgs, err := q.Receive(ctx)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return msgs
}

// decoded is an event as a test reads it, into generic maps: the fields AWS documents.
func decoded(t *testing.T, msg cloudprovider.QueueMessage) map[string]any {
	t.Helper()
	event := map[string]any{}
	if err := json.Unmarshal(msg.Body, &event); err != nil {
		t.Fatalf("message %s is not JSON: %v\n%s", msg.ID, err, msg.Body)
	}
	return event
}

func detailOf(t *testing.T, event map[string]any) map[string]any {
	t.Helper()
	detail, ok := event["detail"].(map[string]any)
	if !ok {
		t.Fatalf("event without a detail object: %v", event)
	}
	return detail
}

// onDemand asks for an on-demand instance; requests without requirements get the
// cheapest offering, which is spot.
func onDemand(token string) *cloudprovider.CreateRequest {
	req := request(token)
	req.Requirements = []corev1.NodeSelectorRequirement{{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{v1beta1.CapacityTypeOnDemand}}}
	return req
}

func TestReceiveWaitsForTheLongPollThenReturnsNothing(t *testing.T) {
	c, clk := newCloud(t, Options{TimeScale: 2, Notices: NoticeOptions{LongPoll: 20 * time.Second}})
	got := receiveAsync(t, c.Notices(), clk)
	// The long poll is 20 s of scenario time, 10 s on the clock at time scale 2.
	clk.Step(9 * time.Second)
	select {
	case msgs := <-got:
		t.Fatalf("Receive returned %d messages before its long poll ended", len(msgs))
	case <-time.After(50 * time.Millisecond):
	}
	clk.Step(time.Second)
	select {
	case msgs := <-got:
		if len(msgs) != 0 {
			t.Fatalf("Receive of an empty queue returned %v", msgs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Receive did not return at the end of its long poll")
	}
}

func TestReceiveWakesWhenANoticeIsPosted(t *testing.T) {
	c, clk := newCloud(t, Options{Notices: NoticeOptions{StateChanges: StateChangesNever}})
	inst := running(t, c, clk, request("a"))
	got := receiveAsync(t, c.Notices(), clk)
	if err := c.RecommendRebalance([]string{inst.ID}); err != nil {
		t.Fatal(err)
	}
	select {
	case msgs := <-got:
		if len(msgs) != 1 || decoded(t, msgs[0])["detail-type"] != DetailTypeRebalance {
			t.Fatalf("got %d messages, want the rebalance recommendation: %v", len(msgs), msgs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Receive did not wake for the posted notice")
	}
}

func TestReceiveEndsWithItsContext(t *testing.T) {
	c, _ := newCloud(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Notices().Receive(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Receive with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestInterruptWarnsAndTerminatesOnceTheNoticePasses(t *testing.T) {
	c, clk := newCloud(t, Options{TimeScale: 4, Notices: NoticeOptions{StateChanges: StateChangesNever}})
	inst := running(t, c, clk, request("a"))
	if inst.CapacityType != v1beta1.CapacityTypeSpot {
		t.Fatalf("the cheapest offering is %s, want spot", inst.CapacityType)
	}
	warnedAt := clk.Now()
	if err := c.Interrupt([]string{inst.ID}, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	msgs := receiveNow(t, c.Notices())
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	event := decoded(t, msgs[0])
	for field, want := range map[string]any{
		"version": "0", "detail-type": "EC2 Spot Instance Interruption Warning", "source": "aws.ec2",
		"account": Account, "region": DefaultRegion,
	} {
		if event[field] != want {
			t.Errorf("%s = %v, want %v", field, event[field], want)
		}
	}
	if resources, _ := event["resources"].([]any); len(resources) != 1 || resources[0] != "arn:aws:ec2:fake-1:"+Account+":instance/"+inst.ID {
		t.Errorf("resources = %v", event["resources"])
	}
	if id, _ := event["id"].(string); id == "" {
		t.Error("the event has no id")
	}
	detail := detailOf(t, event)
	if detail["instance-id"] != inst.ID || detail["instance-action"] != "terminate" {
		t.Errorf("detail = %v", detail)
	}
	// Two minutes at time scale 4 are 30 s on the clock; the event's time is two minutes
	// before that, so that time + 2m, as handlers read it, is the true deadline.
	deadline := warnedAt.Add(30 * time.Second)
	eventTime, err := time.Parse(time.RFC3339, event["time"].(string))
	if err != nil {
		t.Fatalf("time %v: %v", event["time"], err)
	}
	if !eventTime.Add(SpotNotice).Equal(deadline.Truncate(time.Second)) {
		t.Errorf("time + 2m = %s, want the deadline %s", eventTime.Add(SpotNotice), deadline)
	}

	clk.Step(30*time.Second - time.Millisecond)
	wantState(t, c, inst.ID, cloudprovider.StateRunning)
	clk.Step(time.Millisecond)
	wantState(t, c, inst.ID, cloudprovider.StateShuttingDown)
	if v := view(t, c, inst.ID); v.Phase != physics.NodeShuttingDown || !v.Since.Equal(deadline) {
		t.Errorf("the kubelet reports %s since %s, want ShuttingDown since the deadline %s", v.Phase, v.Since, deadline)
	}
	clk.Step(c.scaled(c.physics.TerminateDelay))
	wantState(t, c, inst.ID, cloudprovider.StateTerminated)
}

func TestInterruptRefusesWhatEC2CannotInterrupt(t *testing.T) {
	c, clk := newCloud(t, Options{})
	spot := running(t, c, clk, request("spot"))
	od := running(t, c, clk, onDemand("od"))
	for name, ids := range map[string][]string{
		"an on-demand instance": {spot.ID, od.ID},
		"an unknown instance":   {spot.ID, "i-unknown"},
	} {
		if err := c.Interrupt(ids, time.Minute); err == nil {
			t.Errorf("interrupting %s succeeded", name)
		}
	}
	if err := c.Interrupt([]string{spot.ID}, -time.Second); err == nil {
		t.Error("a negative notice was accepted")
	}
	if n := c.notices.Len(); n != 0 {
		t.Errorf("refused calls posted %d notices", n)
	}
	clk.Step(time.Hour)
	wantState(t, c, spot.ID, cloudprovider.StateRunning)
}

func TestUndeletedNoticesComeBackAfterTheVisibilityTimeout(t *testing.T) {
	c, clk := newCloud(t, Options{Notices: NoticeOptions{VisibilityTimeout: 30 * time.Second, StateChanges: StateChangesNever}})
	a, b := running(t, c, clk, request("a")), running(t, c, clk, request("b"))
	if err := c.RecommendRebalance([]string{a.ID, b.ID}); err != nil {
		t.Fatal(err)
	}
	first := receiveNow(t, c.Notices())
	if len(first) != 2 {
		t.Fatalf("got %d messages, want 2", len(first))
	}
	// Delete one; the other is hidden for 30 s, then comes again with a new handle.
	if err := c.Notices().Delete(context.Background(), first[:1]); err != nil {
		t.Fatal(err)
	}
	got := receiveAsync(t, c.Notices(), clk)
	clk.Step(30 * time.Second)
	var again []cloudprovider.QueueMessage
	select {
	case again = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the undeleted message did not come back")
	}
	if len(again) != 1 || again[0].ID != first[1].ID || again[0].Handle == first[1].Handle {
		t.Fatalf("came back: %+v, want %s with a new handle", again, first[1].ID)
	}
	// The first receipt's handle is stale: deleting with it deletes nothing.
	if err := c.Notices().Delete(context.Background(), first[1:]); err != nil {
		t.Fatal(err)
	}
	if n := c.notices.Len(); n != 1 {
		t.Fatalf("a stale handle deleted the message: %d left", n)
	}
	for range 2 {
		if err := c.Notices().Delete(context.Background(), again); err != nil {
			t.Fatalf("deleting (twice): %v", err)
		}
	}
	if n := c.notices.Len(); n != 0 {
		t.Fatalf("%d messages left after deleting both", n)
	}
}

func TestReceiveReturnsAtMostTenMessages(t *testing.T) {
	c, clk := newCloud(t, Options{Notices: NoticeOptions{StateChanges: StateChangesNever}})
	var ids []string
	for _, token := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		ids = append(ids, create(t, c, request(token)).ID)
	}
	clk.Step(c.physics.LaunchDelay)
	if err := c.RecommendRebalance(ids); err != nil {
		t.Fatal(err)
	}
	if first, second := receiveNow(t, c.Notices()), receiveNow(t, c.Notices()); len(first) != 10 || len(second) != 2 {
		t.Fatalf("received %d then %d, want 10 then 2", len(first), len(second))
	}
}

// stateChanges returns the states of the state-change notices received, in order.
func stateChanges(t *testing.T, msgs []cloudprovider.QueueMessage, id string) []string {
	t.Helper()
	var states []string
	for _, m := range msgs {
		event := decoded(t, m)
		if event["detail-type"] != DetailTypeStateChange {
			continue
		}
		if detail := detailOf(t, event); detail["instance-id"] == id {
			states = append(states, detail["state"].(string))
		}
	}
	return states
}

func TestStateChangeNoticesFollowEveryTransition(t *testing.T) {
	c, clk := newCloud(t, Options{Notices: NoticeOptions{StateChanges: StateChangesAlways}})
	inst := stopped(t, c, clk, onDemand("a"))
	if err := act(t, c.StartInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.StartDelay)
	if err := act(t, c.TerminateInstances, inst.ID); err != nil {
		t.Fatal(err)
	}
	clk.Step(c.physics.TerminateDelay)
	var all []cloudprovider.QueueMessage
	for c.refresh(); c.notices.Len() > 0; {
		msgs := receiveNow(t, c.Notices())
		all = append(all, msgs...)
		if err := c.Notices().Delete(context.Background(), msgs); err != nil {
			t.Fatal(err)
		}
		if len(all) > 20 {
			t.Fatal("the queue does not empty")
		}
	}
	want := []string{"pending", "running", "stopping", "stopped", "pending", "running", "shutting-down", "terminated"}
	if got := stateChanges(t, all, inst.ID); !slices.Equal(got, want) {
		t.Fatalf("state changes %v, want %v", got, want)
	}
}

func TestStateChangeNoticesStartOnceTheQueueIsRead(t *testing.T) {
	c, clk := newCloud(t, Options{})
	quiet := running(t, c, clk, onDemand("quiet"))
	if n := c.notices.Len(); n != 0 {
		t.Fatalf("a queue nobody read holds %d state changes", n)
	}
	receiveAsyncDone(t, c, clk)
	if err := act(t, plainStop(c), quiet.ID); err != nil {
		t.Fatal(err)
	}
	if got := stateChanges(t, receiveNow(t, c.Notices()), quiet.ID); !slices.Equal(got, []string{"stopping"}) {
		t.Fatalf("after the first Receive, state changes %v, want [stopping]", got)
	}

	never, clk2 := newCloud(t, Options{Notices: NoticeOptions{StateChanges: StateChangesNever}})
	receiveAsyncDone(t, never, clk2)
	running(t, never, clk2, onDemand("b"))
	if n := never.notices.Len(); n != 0 {
		t.Fatalf("with state changes off, the queue holds %d messages", n)
	}
}

// receiveAsyncDone reads the queue once until its long poll ends.
func receiveAsyncDone(t *testing.T, c *Cloud, clk *testingclock.FakeClock) {
	t.Helper()
	got := receiveAsync(t, c.Notices(), clk)
	clk.Step(defaultLongPoll)
	if msgs := <-got; len(msgs) != 0 {
		t.Fatalf("the Receive found %d messages", len(msgs))
	}
}

func TestTransitionsDuringALongPollArePostedWhenTheyHappen(t *testing.T) {
	c, clk := newCloud(t, Options{Notices: NoticeOptions{StateChanges: StateChangesAlways}})
	inst := create(t, c, onDemand("a"))
	if got := stateChanges(t, receiveNow(t, c.Notices()), inst.ID); !slices.Equal(got, []string{"pending"}) {
		t.Fatalf("state changes %v, want [pending]", got)
	}
	// Nobody looks at the instance: the queue itself brings it up to date when it runs.
	got := receiveAsync(t, c.Notices(), clk)
	clk.Step(c.physics.LaunchDelay)
	select {
	case msgs := <-got:
		if states := stateChanges(t, msgs, inst.ID); !slices.Equal(states, []string{"running"}) {
			t.Fatalf("state changes %v, want [running]", states)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the transition to running was not posted during the long poll")
	}
}

func TestScheduleChangePostsAHealthEventAndRetiresTheInstance(t *testing.T) {
	c, clk := newCloud(t, Options{Notices: NoticeOptions{StateChanges: StateChangesNever}})
	inst := running(t, c, clk, onDemand("a"))
	retireAt := clk.Now().Add(10 * time.Minute)
	if err := c.ScheduleChange([]string{inst.ID}, clk.Now()); err == nil {
		t.Error("a scheduled change now was accepted")
	}
	if err := c.ScheduleChange([]string{inst.ID}, retireAt); err != nil {
		t.Fatal(err)
	}
	msgs := receiveNow(t, c.Notices())
	if len(msgs) != 1 {
		t.Fatalf("got %d messages", len(msgs))
	}
	event := decoded(t, msgs[0])
	if event["detail-type"] != "AWS Health Event" || event["source"] != "aws.health" {
		t.Errorf("event %v", event)
	}
	detail := detailOf(t, event)
	if detail["eventTypeCategory"] != "scheduledChange" || detail["service"] != "EC2" {
		t.Errorf("detail %v", detail)
	}
	entities, _ := detail["affectedEntities"].([]any)
	if len(entities) != 1 || entities[0].(map[string]any)["entityValue"] != inst.ID {
		t.Errorf("affectedEntities %v", detail["affectedEntities"])
	}
	start, err := time.Parse(http.TimeFormat, detail["startTime"].(string))
	if err != nil || !start.Equal(retireAt) {
		t.Errorf("startTime %v (%v), want %s", detail["startTime"], err, retireAt)
	}
	clk.Step(10*time.Minute - time.Second)
	wantState(t, c, inst.ID, cloudprovider.StateRunning)
	clk.Step(time.Second)
	wantState(t, c, inst.ID, cloudprovider.StateShuttingDown)
}

func TestNoticesOverTheRemoteProtocol(t *testing.T) {
	c, clk, remote, _ := newRemote(t)
	inst := running(t, c, clk, request("a"))
	if err := c.Interrupt([]string{inst.ID}, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	msgs, err := remote.Notices().Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	local := c.notices
	if len(msgs) != 1 || decoded(t, msgs[0])["detail-type"] != DetailTypeSpotInterruption {
		t.Fatalf("received %v over the wire", msgs)
	}
	if err := remote.Notices().Delete(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	if n := local.Len(); n != 0 {
		t.Fatalf("the delete over the wire left %d messages", n)
	}
}

func TestRemoteNoticesOfACloudWithoutAQueueAreUnsupported(t *testing.T) {
	c, _ := newCloud(t, Options{})
	// Embedding the interface hides the cloud's Notices, as a wrapper that does not
	// forward it would.
	srv := httptest.NewServer(NewServer(struct{ cloudprovider.API }{c}))
	t.Cleanup(srv.Close)
	remote, err := NewRemote(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.Notices().Receive(context.Background())
	wantCode(t, err, cloudprovider.CodeUnsupported)
}

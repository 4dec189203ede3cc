package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// neverExisted is an instance ID EC2 never handed out.
const neverExisted = "i-0123456789abcdef0"

// The actions share one moto (it takes seconds to start); each makes its own instances.
// Throttling goes last: the adaptive retryer slows the client down after it.
func TestActions(t *testing.T) {
	e := newEC2Env(t)
	for _, tc := range []struct {
		name string
		test func(*testing.T, *ec2Env)
	}{
		{"BatchGivesEveryInstanceItsOwnResult", batchedActionsGiveEveryInstanceItsOwnResult},
		{"RefusedCallNamingAnInstanceGoesAgain", refusedCallNamingAnInstanceIsSentAgainWithout},
		{"StartOutOfCapacityIsSplitByOffering", startOutOfCapacityIsSplitByOffering},
		{"UnauthorizedStartFailsTheWholeCall", unauthorizedStartFailsTheWholeCall},
		{"StopHibernatesInstancesLaunchedForIt", stopHibernatesInstancesLaunchedForIt},
		{"ForcedStopAsksEC2ToForce", forcedStopAsksEC2ToForce},
		{"ThrottlingIsRetriedByTheSDK", throttlingIsRetriedByTheSDK},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, e) })
	}
}

// wantCodes checks that the instances with an error are exactly those of want, with
// those codes.
func wantCodes(t *testing.T, what string, results map[string]error, want map[string]cloudprovider.ErrorCode) {
	t.Helper()
	got := map[string]cloudprovider.ErrorCode{}
	for id, err := range results {
		got[id] = cloudprovider.CodeOf(err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("%s: per-instance errors %v (%v), want %v", what, got, results, want)
	}
}

func wantStates(t *testing.T, e *ec2Env, want types.InstanceStateName, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if got := e.state(t, id); got != want {
			t.Fatalf("instance %s is %s, want %s", id, got, want)
		}
	}
}

func wantCalls(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("%s made EC2 calls %v, want %v", what, got, want)
	}
	t.Logf("%s: EC2 calls %v", what, got)
}

// A batch with instances to act on, instances already done, an ID that never existed,
// an instance in a state the action does not apply to and another cluster's instance:
// one describe and one action call, and every instance its own answer. Another
// cluster's instance is not ours, not absent.
func batchedActionsGiveEveryInstanceItsOwnResult(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	stopped := e.runInstances(t, 3, "m5.large", zoneA, ours("a"))
	running := e.runInstances(t, 1, "m5.large", zoneB, ours("a"))
	terminated := e.runInstances(t, 1, "m5.large", zoneA, ours("a"))
	foreign := e.runInstances(t, 1, "m5.large", zoneA, map[string]string{v1beta1.TagCluster: "other-cluster"})
	if _, err := e.clients.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: append(slices.Clone(stopped), foreign...)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.clients.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: terminated}); err != nil {
		t.Fatal(err)
	}

	batch := slices.Concat(stopped, running, terminated, foreign, []string{neverExisted})
	before := awsCalls(t)
	results, err := e.cloud.StartInstances(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	_, calls := callsSince(t, before)
	wantCodes(t, "start", results, map[string]cloudprovider.ErrorCode{
		terminated[0]: cloudprovider.CodeInvalidState,
		foreign[0]:    cloudprovider.CodeNotOwned,
		neverExisted:  cloudprovider.CodeNotFound,
	})
	wantCalls(t, "start", calls, map[string]int{"DescribeInstances": 1, "StartInstances": 1})
	wantStates(t, e, types.InstanceStateNameRunning, slices.Concat(stopped, running)...)
	wantStates(t, e, types.InstanceStateNameStopped, foreign...)

	// Stop the three again, with one stopped already: it is done, not an error.
	if _, err := e.clients.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: stopped[:1]}); err != nil {
		t.Fatal(err)
	}
	before = awsCalls(t)
	results, err = e.cloud.StopInstances(ctx, batch, false)
	if err != nil {
		t.Fatal(err)
	}
	_, calls = callsSince(t, before)
	wantCodes(t, "stop", results, map[string]cloudprovider.ErrorCode{
		terminated[0]: cloudprovider.CodeInvalidState,
		foreign[0]:    cloudprovider.CodeNotOwned,
		neverExisted:  cloudprovider.CodeNotFound,
	})
	wantCalls(t, "stop", calls, map[string]int{"DescribeInstances": 1, "StopInstances": 1})
	wantStates(t, e, types.InstanceStateNameStopped, slices.Concat(stopped, running, foreign)...)

	// Terminating a terminated instance does nothing; another cluster's is left alone.
	before = awsCalls(t)
	results, err = e.cloud.TerminateInstances(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	_, calls = callsSince(t, before)
	wantCodes(t, "terminate", results, map[string]cloudprovider.ErrorCode{
		foreign[0]:   cloudprovider.CodeNotOwned,
		neverExisted: cloudprovider.CodeNotFound,
	})
	wantCalls(t, "terminate", calls, map[string]int{"DescribeInstances": 1, "TerminateInstances": 1})
	wantStates(t, e, types.InstanceStateNameTerminated, slices.Concat(stopped, running, terminated)...)
	wantStates(t, e, types.InstanceStateNameStopped, foreign...)
}

// refuseStartsWith answers every StartInstances call that carries one of ids with an
// EC2 error whose message is message of the first such ID.
func refuseStartsWith(ids []string, status int, code string, message func(id string) string) func(url.Values) *ec2Fault {
	return func(form url.Values) *ec2Fault {
		if form.Get("Action") != "StartInstances" {
			return nil
		}
		for _, id := range formIDs(form) {
			if slices.Contains(ids, id) {
				return &ec2Fault{status: status, code: code, message: message(id)}
			}
		}
		return nil
	}
}

// EC2 refuses a whole call for one instance that changed state between the describe and
// the call, or vanished: the instance it names gets the error, the rest go again at once.
func refusedCallNamingAnInstanceIsSentAgainWithout(t *testing.T, e *ec2Env) {
	for _, tc := range []struct {
		code, message string
		want          cloudprovider.ErrorCode
	}{
		{"IncorrectInstanceState", "The instance '%s' is not in a state from which it can be started.", cloudprovider.CodeInvalidState},
		{"InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", cloudprovider.CodeNotFound},
	} {
		t.Run(tc.code, func(t *testing.T) {
			ctx := context.Background()
			ids := e.runInstances(t, 4, "m5.large", zoneA, ours("a"))
			if _, err := e.clients.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids}); err != nil {
				t.Fatal(err)
			}
			e.proxy.setFault(t, refuseStartsWith(ids[2:3], http.StatusBadRequest, tc.code, func(id string) string { return fmt.Sprintf(tc.message, id) }))
			before := awsCalls(t)
			results, err := e.cloud.StartInstances(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			byCode, calls := callsSince(t, before)
			wantCodes(t, "start", results, map[string]cloudprovider.ErrorCode{ids[2]: tc.want})
			wantCalls(t, "start", calls, map[string]int{"DescribeInstances": 1, "StartInstances": 2})
			if byCode["StartInstances "+tc.code] != 1 || byCode["StartInstances OK"] != 1 {
				t.Fatalf("StartInstances calls by result %v, want one refused and one OK", byCode)
			}
			wantStates(t, e, types.InstanceStateNameRunning, ids[0], ids[1], ids[3])
			wantStates(t, e, types.InstanceStateNameStopped, ids[2])
		})
	}
}

// EC2 refuses a start for lack of capacity without naming an instance: the batch goes
// again one call per offering, and the instances of the offering refused alone get the
// error with their offering, for the caller to mark unavailable.
func startOutOfCapacityIsSplitByOffering(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	m5 := e.runInstances(t, 3, "m5.large", zoneA, ours("a"))
	c5 := e.runInstances(t, 2, "c5.large", zoneB, ours("a"))
	all := slices.Concat(m5, c5)
	if _, err := e.clients.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: all}); err != nil {
		t.Fatal(err)
	}
	// EC2 answers InsufficientInstanceCapacity as a server error, naming no instance;
	// the retryer must not retry it.
	e.proxy.setFault(t, refuseStartsWith(c5, http.StatusInternalServerError, "InsufficientInstanceCapacity", func(string) string {
		return "We currently do not have sufficient c5.large capacity in the Availability Zone you requested (us-east-1b)."
	}))
	before := awsCalls(t)
	results, err := e.cloud.StartInstances(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	_, calls := callsSince(t, before)
	wantCodes(t, "start", results, map[string]cloudprovider.ErrorCode{
		c5[0]: cloudprovider.CodeInsufficientCapacity,
		c5[1]: cloudprovider.CodeInsufficientCapacity,
	})
	// One refused call of all five, then one per offering: m5.large in 1a, c5.large in 1b.
	wantCalls(t, "start", calls, map[string]int{"DescribeInstances": 1, "StartInstances": 3})
	want := cloudprovider.OfferingKey{InstanceType: "c5.large", Zone: zoneB, CapacityType: v1beta1.CapacityTypeOnDemand}
	for _, id := range c5 {
		var cloudErr *cloudprovider.Error
		if !errors.As(results[id], &cloudErr) || !slices.Equal(cloudErr.Offerings, []cloudprovider.OfferingKey{want}) {
			t.Fatalf("error of %s: %v, want offerings [%v]", id, results[id], want)
		}
	}
	wantStates(t, e, types.InstanceStateNameRunning, m5...)
	wantStates(t, e, types.InstanceStateNameStopped, c5...)
}

// A refusal that is about the call, not its instances, fails the whole call.
func unauthorizedStartFailsTheWholeCall(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	ids := e.runInstances(t, 2, "m5.large", zoneA, ours("a"))
	if _, err := e.clients.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids}); err != nil {
		t.Fatal(err)
	}
	e.proxy.setFault(t, refuseStartsWith(ids, http.StatusForbidden, "UnauthorizedOperation", func(string) string {
		return "You are not authorized to perform this operation. Encoded authorization failure message: c2VjcmV0"
	}))
	before := awsCalls(t)
	results, err := e.cloud.StartInstances(ctx, ids)
	_, calls := callsSince(t, before)
	if !errors.Is(err, cloudprovider.ErrUnauthorized) || results != nil {
		t.Fatalf("StartInstances = %v, %v; want a whole-call Unauthorized error", results, err)
	}
	wantCalls(t, "start", calls, map[string]int{"DescribeInstances": 1, "StartInstances": 1})
	for _, want := range []string{"ec2:StartInstances", "c2VjcmV0", "decode-authorization-message"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
}

// Hibernation is asked only of instances launched able to hibernate; the others stop
// plainly, in a call of their own.
func stopHibernatesInstancesLaunchedForIt(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	hibernating := e.runInstances(t, 2, "m5.large", zoneA, ours("a"), func(in *ec2.RunInstancesInput) {
		in.HibernationOptions = &types.HibernationOptionsRequest{Configured: aws.Bool(true)}
	})
	plain := e.runInstances(t, 1, "m5.large", zoneA, ours("a"))
	mark := e.proxy.mark()
	results, err := e.cloud.stopInstances(ctx, slices.Concat(hibernating, plain), true)
	if err != nil || len(results) != 0 {
		t.Fatalf("stopInstances = %v, %v", results, err)
	}
	hibernate := map[string]string{}
	for _, form := range e.proxy.since(mark) {
		if form.Get("Action") == "StopInstances" {
			for _, id := range formIDs(form) {
				hibernate[id] = form.Get("Hibernate")
			}
		}
	}
	want := map[string]string{hibernating[0]: "true", hibernating[1]: "true", plain[0]: "false"}
	if !maps.Equal(hibernate, want) {
		t.Fatalf("StopInstances asked Hibernate %v, want %v", hibernate, want)
	}
	wantStates(t, e, types.InstanceStateNameStopped, slices.Concat(hibernating, plain)...)
}

// A forced stop sends StopInstances with Force for the running instances (and would for
// stopping ones: moto stops at once, so none stays stopping here); a stopped one is
// stopped already and is not sent.
func forcedStopAsksEC2ToForce(t *testing.T, e *ec2Env) {
	ctx := context.Background()
	running := e.runInstances(t, 1, "m5.large", zoneA, ours("a"))
	stopped := e.runInstances(t, 1, "m5.large", zoneA, ours("a"))
	if _, err := e.clients.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: stopped}); err != nil {
		t.Fatal(err)
	}
	mark := e.proxy.mark()
	results, err := e.cloud.ForceStopInstances(ctx, slices.Concat(running, stopped))
	if err != nil || len(results) != 0 {
		t.Fatalf("ForceStopInstances = %v, %v", results, err)
	}
	force := map[string]string{}
	for _, form := range e.proxy.since(mark) {
		if form.Get("Action") == "StopInstances" {
			for _, id := range formIDs(form) {
				force[id] = form.Get("Force")
			}
		}
	}
	if want := map[string]string{running[0]: "true"}; !maps.Equal(force, want) {
		t.Fatalf("StopInstances asked Force %v, want %v", force, want)
	}
	wantStates(t, e, types.InstanceStateNameStopped, slices.Concat(running, stopped)...)
}

// Throttling is the SDK retryer's: a call answered RequestLimitExceeded twice succeeds
// at the third attempt, and each attempt is counted.
func throttlingIsRetriedByTheSDK(t *testing.T, e *ec2Env) {
	ids := e.runInstances(t, 1, "m5.large", zoneA, ours("a"))
	throttled := 0
	e.proxy.setFault(t, func(form url.Values) *ec2Fault {
		if form.Get("Action") != "DescribeInstances" || throttled == 2 {
			return nil
		}
		throttled++
		return &ec2Fault{status: http.StatusServiceUnavailable, code: "RequestLimitExceeded", message: "Request limit exceeded."}
	})
	mark := e.proxy.mark()
	before := awsCalls(t)
	found, err := e.cloud.DescribeInstances(context.Background(), ids)
	if err != nil || found[ids[0]] == nil {
		t.Fatalf("DescribeInstances = %v, %v", found, err)
	}
	byCode, _ := callsSince(t, before)
	if attempts := len(e.proxy.since(mark)); attempts != 3 {
		t.Fatalf("%d attempts reached EC2, want 3", attempts)
	}
	if want := map[string]int{"DescribeInstances RequestLimitExceeded": 2, "DescribeInstances OK": 1}; !maps.Equal(byCode, want) {
		t.Fatalf("counted %v, want %v", byCode, want)
	}
}

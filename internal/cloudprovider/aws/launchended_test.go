package aws

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// An instance EC2 ends right after accepting its launch because an encrypted volume's
// KMS key cannot be used is described with that reason, readable; one a user
// terminated, and one that runs, are not.
//
// moto terminates instances only as a user does (state reason
// Client.UserInitiatedShutdown) and has no way to set another reason, through its API
// or its /moto-api/ backend endpoints. So the instance is launched by the provider and
// terminated in moto for real, and only the state reason of moto's DescribeInstances
// answer is rewritten on the wire to EC2's for an unusable key (code
// Client.InternalError, message "Client.InternalError: Client error on launch"): the
// SDK still parses the XML, and the provider reads it as it reads EC2's.
//
// On main before the change there was no EndedAtLaunch (the test does not compile
// there): the terminated instance was described with nothing to tell it from one a
// user terminated, and the nodeclaim controller removed its claim as InstanceGone.
func TestAnInstanceEndedAtLaunchSaysWhy(t *testing.T) {
	e := newEC2Env(t)
	ctx := context.Background()
	var ids []string
	for _, claim := range []string{"kms-denied", "user-terminated", "running"} {
		inst, err := e.cloud.Create(ctx, launchRequest(e, claim))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, inst.ID)
	}
	denied, byUser, running := ids[0], ids[1], ids[2]
	if _, err := e.clients.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{denied, byUser}}); err != nil {
		t.Fatal(err)
	}
	e.proxy.rewriteAnswers(t, func(form url.Values, body string) string {
		if form.Get("Action") != "DescribeInstances" || !strings.Contains(body, denied) {
			return body
		}
		return injectStateReason(t, body, denied, "Client.InternalError", "Client.InternalError: Client error on launch")
	})

	found, err := e.cloud.DescribeInstances(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	got := found[denied]
	if got == nil || got.State != cloudprovider.StateTerminated {
		t.Fatalf("instance %s described as %+v; want it terminated", denied, got)
	}
	for _, want := range []string{denied, "Client.InternalError: Client error on launch", "KMS key", "docs/aws.md"} {
		if !strings.Contains(got.EndedAtLaunch, want) {
			t.Errorf("EndedAtLaunch = %q; want it to say %q", got.EndedAtLaunch, want)
		}
	}
	if strings.Contains(got.EndedAtLaunch, "Client.InternalError: Client.InternalError") {
		t.Errorf("EndedAtLaunch = %q says the code twice", got.EndedAtLaunch)
	}
	if reason := found[byUser].EndedAtLaunch; reason != "" || found[byUser].State != cloudprovider.StateTerminated {
		t.Errorf("an instance a user terminated: state %s, EndedAtLaunch %q; want terminated and no reason", found[byUser].State, reason)
	}
	if reason := found[running].EndedAtLaunch; reason != "" {
		t.Errorf("a running instance: EndedAtLaunch %q; want none", reason)
	}
}

// injectStateReason replaces the state reason of instance id in a DescribeInstances
// answer as moto writes it: within the instance's <item>, <stateReason><code>…</code>
// <message>…</message></stateReason> comes before <instanceId>.
func injectStateReason(t *testing.T, body, id, code, message string) string {
	t.Helper()
	at := strings.Index(body, "<instanceId>"+id+"</instanceId>")
	if at < 0 {
		t.Fatalf("moto's answer does not list %s", id)
	}
	start := strings.LastIndex(body[:at], "<stateReason>")
	if start < 0 || strings.Contains(body[start:at], "<instanceId>") {
		t.Fatalf("moto's answer has no state reason for %s:\n%s", id, body)
	}
	end := start + strings.Index(body[start:], "</stateReason>")
	return body[:start] + "<stateReason><code>" + code + "</code><message>" + message + "</message>" + body[end:]
}

package ec2nodeclass

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider/aws"
)

var (
	oldAMIs  = []v1beta1.ResolvedAMI{{ID: "ami-old", Architecture: "amd64", Family: "al2023"}}
	newAMIs  = []v1beta1.ResolvedAMI{{ID: "ami-new", Architecture: "amd64", Family: "al2023"}}
	subnets  = []v1beta1.ResolvedSubnet{{ID: "subnet-1", Zone: "us-east-1a"}, {ID: "subnet-2", Zone: "us-east-1b"}}
	groups   = []v1beta1.ResolvedSecurityGroup{{ID: "sg-1", Name: "nodes"}}
	resolved = aws.Resolution{AMIs: newAMIs, Subnets: subnets, SecurityGroups: groups, InstanceProfile: "profile"}
)

// resolvedClass is a class of generation 2 that resolved to the old images.
func resolvedClass() *v1beta1.EC2NodeClass {
	class := &v1beta1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 2}}
	class.Status = v1beta1.EC2NodeClassStatus{ObservedGeneration: 2, AMIs: oldAMIs, Subnets: subnets, SecurityGroups: groups, InstanceProfile: "profile",
		Conditions: []metav1.Condition{{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonResolved, ObservedGeneration: 2}}}
	return class
}

func withFailures(res aws.Resolution, failures ...*aws.Failure) aws.Resolution {
	for _, f := range failures {
		switch f.Part {
		case aws.PartAMIs:
			res.AMIs = nil
		case aws.PartSubnets:
			res.Subnets = nil
		case aws.PartSecurityGroups:
			res.SecurityGroups = nil
		case aws.PartInstanceProfile:
			res.InstanceProfile = ""
		}
	}
	res.Failures = failures
	return res
}

func ready(class *v1beta1.EC2NodeClass) *metav1.Condition {
	return meta.FindStatusCondition(class.Status.Conditions, v1beta1.ConditionReady)
}

func TestApplyTakesWhatResolved(t *testing.T) {
	class := &v1beta1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	apply(class, resolved)
	st := class.Status
	if !reflect.DeepEqual(st.AMIs, newAMIs) || !reflect.DeepEqual(st.Subnets, subnets) || !reflect.DeepEqual(st.SecurityGroups, groups) || st.InstanceProfile != "profile" || st.ObservedGeneration != 1 {
		t.Fatalf("status %+v", st)
	}
	c := ready(class)
	if c.Status != metav1.ConditionTrue || c.Reason != ReasonResolved || c.ObservedGeneration != 1 {
		t.Fatalf("Ready %+v", c)
	}
	for _, want := range []string{"ami-new (amd64)", "2 subnets in us-east-1a, us-east-1b", "1 security groups", "instance profile profile"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q does not say %q", c.Message, want)
		}
	}
}

// What is not there any more is emptied; what could not be read for an AWS error keeps
// its last good values; Ready says the first reason and every message.
func TestApplyEmptiesWhatIsGoneAndKeepsWhatCouldNotBeRead(t *testing.T) {
	class := resolvedClass()
	apply(class, withFailures(resolved,
		&aws.Failure{Part: aws.PartAMIs, Reason: aws.ReasonAMINotFound, Message: "no image"},
		&aws.Failure{Part: aws.PartSubnets, Reason: aws.ReasonAWSError, Message: "describing subnets: UnauthorizedOperation: no"}))
	st := class.Status
	if st.AMIs != nil {
		t.Errorf("AMIs %+v; an image that is gone is emptied", st.AMIs)
	}
	if !reflect.DeepEqual(st.Subnets, subnets) {
		t.Errorf("subnets %+v; an AWS error keeps the last good ones", st.Subnets)
	}
	c := ready(class)
	if c.Status != metav1.ConditionFalse || c.Reason != aws.ReasonAMINotFound || c.Message != "no image; describing subnets: UnauthorizedOperation: no" {
		t.Errorf("Ready %+v", c)
	}
}

// Transient AWS errors leave a class that resolved for its generation as it was; they
// make one that never resolved, or whose spec changed, not ready.
func TestTransientErrorsKeepAResolvedClassReady(t *testing.T) {
	throttled := &aws.Failure{Part: aws.PartAMIs, Reason: aws.ReasonAWSError, Message: "throttled", Transient: true}

	class := resolvedClass()
	before := class.DeepCopy()
	apply(class, withFailures(resolved, throttled))
	if !reflect.DeepEqual(before.Status, class.Status) {
		t.Errorf("a throttled refresh changed the status:\n%+v\n%+v", before.Status, class.Status)
	}

	changed := resolvedClass()
	changed.Generation = 3
	apply(changed, withFailures(resolved, throttled))
	if c := ready(changed); c.Status != metav1.ConditionFalse || c.Reason != aws.ReasonAWSError || c.ObservedGeneration != 3 {
		t.Errorf("a changed spec that could not be resolved is Ready %+v", c)
	}
	if !reflect.DeepEqual(changed.Status.AMIs, oldAMIs) {
		t.Errorf("AMIs %+v; the last good ones stay", changed.Status.AMIs)
	}

	fresh := &v1beta1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	apply(fresh, withFailures(resolved, throttled))
	if c := ready(fresh); c.Status != metav1.ConditionFalse || c.Reason != aws.ReasonAWSError {
		t.Errorf("a class never resolved is Ready %+v after a transient error", c)
	}

	// A transient error alongside one about the class is not ignored.
	mixed := resolvedClass()
	apply(mixed, withFailures(resolved, throttled, &aws.Failure{Part: aws.PartSubnets, Reason: aws.ReasonSubnetsNotFound, Message: "no subnet"}))
	if c := ready(mixed); c.Status != metav1.ConditionFalse || c.Reason != aws.ReasonAWSError {
		t.Errorf("Ready %+v; want False with the first failure's reason", c)
	}
}

func TestNoticesTellChangesOnly(t *testing.T) {
	failing := func(reason string) *v1beta1.EC2NodeClassStatus {
		return &v1beta1.EC2NodeClassStatus{AMIs: oldAMIs, Conditions: []metav1.Condition{{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: "m"}}}
	}
	good := func(amis []v1beta1.ResolvedAMI) *v1beta1.EC2NodeClassStatus {
		return &v1beta1.EC2NodeClassStatus{AMIs: amis, Conditions: []metav1.Condition{{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonResolved, Message: "ok"}}}
	}
	cases := []struct {
		name          string
		before, after *v1beta1.EC2NodeClassStatus
		want          []string
	}{
		{"first resolution", &v1beta1.EC2NodeClassStatus{}, good(oldAMIs), []string{"Normal Resolved"}},
		{"first failure", &v1beta1.EC2NodeClassStatus{}, failing("SubnetsNotFound"), []string{"Warning SubnetsNotFound"}},
		{"stops resolving", good(oldAMIs), failing("SubnetsNotFound"), []string{"Warning SubnetsNotFound"}},
		{"fails for another reason", failing("SubnetsNotFound"), failing("AMINotFound"), []string{"Warning AMINotFound"}},
		{"still failing", failing("SubnetsNotFound"), failing("SubnetsNotFound"), nil},
		{"recovers", failing("SubnetsNotFound"), good(oldAMIs), []string{"Normal Resolved"}},
		{"refresh, nothing new", good(oldAMIs), good(oldAMIs), nil},
		{"new image", good(oldAMIs), good(newAMIs), []string{"Normal " + ReasonImagesChanged}},
	}
	for _, c := range cases {
		var got []string
		for _, n := range notices(c.before, c.after) {
			kind := "Normal"
			if n.warning {
				kind = "Warning"
			}
			got = append(got, kind+" "+n.reason)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A role that does not resolve keeps the profile Stratos made for the class's last
// role in the status: the nodes hold it, and it still exists. A profile named in
// spec.instanceProfile that is gone is emptied, as before.
//
// On main before the change, the managed profile was emptied too: this test failed at
// "status.instanceProfile = \"\"; want the last one, profile".
func TestAFailedRoleKeepsTheLastManagedProfile(t *testing.T) {
	class := resolvedClass()
	class.Spec.Role = "no-such-role"
	apply(class, withFailures(resolved, &aws.Failure{Part: aws.PartInstanceProfile, Reason: aws.ReasonRoleNotFound, Message: "role no-such-role does not exist"}))
	if got := class.Status.InstanceProfile; got != "profile" {
		t.Errorf("status.instanceProfile = %q; want the last one, profile", got)
	}
	if c := ready(class); c.Status != metav1.ConditionFalse || c.Reason != aws.ReasonRoleNotFound {
		t.Errorf("Ready %+v; want False, RoleNotFound", c)
	}

	named := resolvedClass()
	named.Spec.InstanceProfile = "mine"
	apply(named, withFailures(resolved, &aws.Failure{Part: aws.PartInstanceProfile, Reason: aws.ReasonInstanceProfileNotFound, Message: "instance profile mine does not exist"}))
	if got := named.Status.InstanceProfile; got != "" {
		t.Errorf("a named profile that is gone left status.instanceProfile = %q; want it emptied", got)
	}
}

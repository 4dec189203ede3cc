package ec2nodeclass

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider/aws"
)

// Reasons of an EC2NodeClass's Ready condition besides the resolver's failures
// (aws.Reason*).
const (
	ReasonResolved = "Resolved"
	// ReasonDeleting: the class is deleted and waits for the claims that use it to go
	// before it removes its instance profile.
	ReasonDeleting = "Deleting"
	// ReasonImagesChanged is the Event of a class whose selectors resolve to other
	// images than before.
	ReasonImagesChanged = "ImagesChanged"
)

// apply writes a resolution into class's status. A part that resolved takes the new
// values; a part that does not resolve because what it selects is not there (an image,
// a subnet, a profile named in spec.instanceProfile) is emptied, except the profile
// Stratos manages for spec.role, which keeps the last one; a part whose AWS calls failed keeps what it
// had, the last good values, so that an outage neither drifts nodes nor loses what
// launches use. Ready is True when every part resolved. Transient failures only
// (throttling, server errors, which the SDK retried already) leave a Ready condition
// that was True for this generation as it was: they say nothing about the class, and
// the resolution is retried with backoff. Any other failure makes Ready False with the
// first failure's reason and every failure's message.
func apply(class *v1beta1.EC2NodeClass, res aws.Resolution) {
	st := &class.Status
	keep := func(part aws.Part) bool {
		f := res.Failure(part)
		return f != nil && f.Reason == aws.ReasonAWSError
	}
	if !keep(aws.PartAMIs) {
		st.AMIs = res.AMIs
	}
	if !keep(aws.PartSubnets) {
		st.Subnets = res.Subnets
	}
	if !keep(aws.PartSecurityGroups) {
		st.SecurityGroups = res.SecurityGroups
	}
	// A managed profile that fails (a role that does not exist, or that Stratos may not
	// pass) keeps the last one: it still exists, it is what the nodes hold, and a launch
	// waits for Ready anyway.
	if !keep(aws.PartInstanceProfile) && (class.Spec.Role == "" || res.Failure(aws.PartInstanceProfile) == nil) {
		st.InstanceProfile = res.InstanceProfile
	}

	current := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionReady)
	resolvedBefore := current != nil && current.Status == metav1.ConditionTrue && current.ObservedGeneration == class.Generation
	st.ObservedGeneration = class.Generation
	if len(res.Failures) > 0 && transientOnly(res.Failures) && resolvedBefore {
		return
	}
	ready := metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonResolved,
		Message: summary(st), ObservedGeneration: class.Generation}
	if len(res.Failures) > 0 {
		var messages []string
		for _, f := range res.Failures {
			messages = append(messages, f.Message)
		}
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, res.Failures[0].Reason, strings.Join(messages, "; ")
	}
	meta.SetStatusCondition(&st.Conditions, ready)
}

// transientOnly reports whether every failure is transient.
func transientOnly(failures []*aws.Failure) bool {
	for _, f := range failures {
		if !f.Transient {
			return false
		}
	}
	return true
}

// summary says what a class resolved to, for its Ready condition.
func summary(st *v1beta1.EC2NodeClassStatus) string {
	var images []string
	for _, ami := range st.AMIs {
		images = append(images, fmt.Sprintf("%s (%s)", ami.ID, ami.Architecture))
	}
	zones := map[string]bool{}
	for _, s := range st.Subnets {
		zones[s.Zone] = true
	}
	return fmt.Sprintf("images %s; %d subnets in %s; %d security groups; instance profile %s",
		strings.Join(images, ", "), len(st.Subnets), strings.Join(slices.Sorted(maps.Keys(zones)), ", "), len(st.SecurityGroups), st.InstanceProfile)
}

// notice is an Event to record about a class after its status changed.
type notice struct {
	warning      bool
	reason, note string
}

// notices are what a status change tells users: a class that stops resolving, or
// resolves for another reason than before, gets a Warning with the reason; one that
// resolves again, or for the first time, a Normal Resolved; new images behind the
// selectors a Normal ImagesChanged, as the nodes on the old ones drift. A status that
// stays as it was, as on every periodic refresh, tells nothing.
func notices(before, after *v1beta1.EC2NodeClassStatus) []notice {
	was := meta.FindStatusCondition(before.Conditions, v1beta1.ConditionReady)
	now := meta.FindStatusCondition(after.Conditions, v1beta1.ConditionReady)
	var out []notice
	switch {
	case now == nil:
	case now.Status != metav1.ConditionTrue:
		if was == nil || was.Status != now.Status || was.Reason != now.Reason {
			out = append(out, notice{warning: true, reason: now.Reason, note: now.Message})
		}
	case was == nil || was.Status != metav1.ConditionTrue:
		out = append(out, notice{reason: ReasonResolved, note: now.Message})
	}
	if old, images := imageIDs(before.AMIs), imageIDs(after.AMIs); len(old) > 0 && len(images) > 0 && !slices.Equal(old, images) {
		out = append(out, notice{reason: ReasonImagesChanged, note: fmt.Sprintf(
			"The selectors now resolve to images %s (were %s); nodes on the old images drift and are replaced",
			strings.Join(images, ", "), strings.Join(old, ", "))})
	}
	return out
}

func imageIDs(amis []v1beta1.ResolvedAMI) []string {
	var ids []string
	for _, ami := range amis {
		ids = append(ids, ami.ID)
	}
	return ids
}

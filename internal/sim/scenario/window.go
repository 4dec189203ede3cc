package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/report"
)

// SinceCounts are the counts that accumulate, which a condition's since makes count from
// a mark: the claims started, taken or launched after it, and the latencies and paths
// of the pods created at or after it. The other counts are of the moment, which since
// does not change.
var SinceCounts = []string{"startedFromStandby", "takenWhileWarming", "launchedCold", "podLatencyP99", "podLatencyMax", "podsServed"}

// ServedCount counts the scenario's running pods served by a path: standby (a node
// started from standby for the pod), cold (a node registered after the pod came) or
// existing (a node there before the pod came).
type ServedCount struct {
	Path  string `json:"path"`
	Count `json:",inline"`
}

// BufferConditionCount counts the CapacityBuffers, one by name or all, of one namespace
// or all, whose condition Type has Status (default True), with Reason when it is set.
type BufferConditionCount struct {
	Buffer    string `json:"buffer,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Type      string `json:"type"`
	// Status is True, False or Unknown, in any case (YAML reads True unquoted as the
	// boolean, which arrives as "true"); default True.
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	Count  `json:",inline"`
}

// StatusOrDefault is the status counted: True unless another is given, spelled as the
// API spells it.
func (b *BufferConditionCount) StatusOrDefault() metav1.ConditionStatus {
	if b.Status == "" {
		return metav1.ConditionTrue
	}
	for _, status := range conditionStatuses {
		if strings.EqualFold(b.Status, string(status)) {
			return status
		}
	}
	return metav1.ConditionStatus(b.Status)
}

func (b *BufferConditionCount) describe() string {
	name := fmt.Sprintf("buffers %s %s", b.Type, b.StatusOrDefault())
	if b.Reason != "" {
		name += " (" + b.Reason + ")"
	}
	if b.Buffer != "" {
		name += " named " + b.Buffer
	}
	if b.Namespace != "" {
		name += " in " + b.Namespace
	}
	return name
}

// bufferConditionTypes are the conditions of a CapacityBuffer's status.
var bufferConditionTypes = []string{
	autoscalingv1beta1.ConditionReadyForProvisioning, autoscalingv1beta1.ConditionProvisioning, autoscalingv1beta1.ConditionLimitedByQuotas,
}

var conditionStatuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// validateWindowCounts checks the podsServed and bufferConditions entries of a
// condition, and that since, when set, has a count to apply to.
func (c *Condition) validateWindowCounts() error {
	var errs []error
	for _, served := range c.PodsServed {
		if !slices.Contains(report.Paths, report.Path(served.Path)) {
			errs = append(errs, fmt.Errorf("podsServed: path %q is not one of %v", served.Path, report.Paths))
		}
	}
	for _, bc := range c.BufferConditions {
		if !slices.Contains(bufferConditionTypes, bc.Type) {
			errs = append(errs, fmt.Errorf("bufferConditions: type %q is not one of %v", bc.Type, bufferConditionTypes))
		}
		if !slices.Contains(conditionStatuses, bc.StatusOrDefault()) {
			errs = append(errs, fmt.Errorf("bufferConditions: status %q is not one of %v", bc.Status, conditionStatuses))
		}
	}
	if c.Since != "" && !slices.ContainsFunc(c.Counts(), func(n NamedCount) bool { return SinceApplies(n) }) {
		errs = append(errs, fmt.Errorf("since %s: it applies only to %s", c.Since, strings.Join(SinceCounts, ", ")))
	}
	return errors.Join(errs...)
}

// SinceApplies says whether a condition's since changes a count.
func SinceApplies(n NamedCount) bool {
	return n.Served != nil || slices.Contains(SinceCounts, n.Name)
}

// validateMarks checks that every mark is named once and that every since names a mark
// of an earlier step.
func (s *Scenario) validateMarks() error {
	var errs []error
	marked := map[string]bool{}
	for i := range s.Steps {
		st := &s.Steps[i]
		var since string
		switch {
		case st.Mark != "":
			if marked[st.Mark] {
				errs = append(errs, fmt.Errorf("steps[%d]: mark %q is already taken by an earlier step", i, st.Mark))
			}
			marked[st.Mark] = true
		case st.Wait != nil:
			since = st.Wait.Since
		case st.Expect != nil:
			since = st.Expect.Since
		}
		if since != "" && !marked[since] {
			errs = append(errs, fmt.Errorf("steps[%d]: since %q names no mark of an earlier step", i, since))
		}
	}
	return errors.Join(errs...)
}

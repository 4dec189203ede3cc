package capacitybuffer

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
)

func statusWith(conditions ...metav1.Condition) *autoscalingv1beta1.CapacityBufferStatus {
	return &autoscalingv1beta1.CapacityBufferStatus{Conditions: conditions}
}

func ready(status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: autoscalingv1beta1.ConditionReadyForProvisioning, Status: status, Reason: reason, Message: reason + " message"}
}

func limitedCondition(status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: autoscalingv1beta1.ConditionLimitedByQuotas, Status: status, Reason: "r", Message: "cut"}
}

// An Event for each change of reason, none for a status that stays as it was.
func TestNotices(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after *autoscalingv1beta1.CapacityBufferStatus
		want          []notice
	}{
		{name: "first failure", before: statusWith(), after: statusWith(ready(metav1.ConditionFalse, ReasonPodTemplateNotFound)),
			want: []notice{{warning: true, reason: ReasonPodTemplateNotFound, note: ReasonPodTemplateNotFound + " message"}}},
		{name: "same failure again", before: statusWith(ready(metav1.ConditionFalse, ReasonPodTemplateNotFound)),
			after: statusWith(ready(metav1.ConditionFalse, ReasonPodTemplateNotFound))},
		{name: "another failure", before: statusWith(ready(metav1.ConditionFalse, ReasonPodTemplateNotFound)),
			after: statusWith(ready(metav1.ConditionFalse, ReasonLimitsTooSmall)),
			want:  []notice{{warning: true, reason: ReasonLimitsTooSmall, note: ReasonLimitsTooSmall + " message"}}},
		{name: "resolves", before: statusWith(ready(metav1.ConditionFalse, ReasonScalableNotFound)),
			after: statusWith(ready(metav1.ConditionTrue, ReasonResolved)),
			want:  []notice{{reason: ReasonResolved, note: ReasonResolved + " message"}}},
		{name: "stays resolved", before: statusWith(ready(metav1.ConditionTrue, ReasonResolved)),
			after: statusWith(ready(metav1.ConditionTrue, ReasonResolved))},
		{name: "limits start to cut", before: statusWith(ready(metav1.ConditionTrue, ReasonResolved), limitedCondition(metav1.ConditionFalse)),
			after: statusWith(ready(metav1.ConditionTrue, ReasonResolved), limitedCondition(metav1.ConditionTrue)),
			want:  []notice{{warning: true, reason: ReasonLimitedByQuotas, note: "cut"}}},
		{name: "limits keep cutting", before: statusWith(ready(metav1.ConditionTrue, ReasonResolved), limitedCondition(metav1.ConditionTrue)),
			after: statusWith(ready(metav1.ConditionTrue, ReasonResolved), limitedCondition(metav1.ConditionTrue))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := notices(tc.before, tc.after); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("notices = %+v, want %+v", got, tc.want)
			}
		})
	}
}

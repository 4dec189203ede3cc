package repair

import (
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

var t0 = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

// cond is a Node condition of type ty with status, taken at since.
func cond(ty corev1.NodeConditionType, status corev1.ConditionStatus, since time.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: ty, Status: status, LastTransitionTime: metav1.NewTime(since), LastHeartbeatTime: metav1.NewTime(t0.Add(time.Hour))}
}

func nodeWith(conditions ...corev1.NodeCondition) *corev1.Node {
	return &corev1.Node{Status: corev1.NodeStatus{Conditions: conditions}}
}

const kernelDeadlock corev1.NodeConditionType = "KernelDeadlock"

func TestAssess(t *testing.T) {
	// The default policy as the API server fills it in: enabled, 30m, no conditions.
	defaults := v1beta1.Repair{}
	withDeadlock := v1beta1.Repair{Conditions: []v1beta1.RepairCondition{
		{Type: string(kernelDeadlock), Status: "True", After: v1beta1.Duration{Duration: 5 * time.Minute}},
	}}
	short := v1beta1.Repair{NotReadyAfter: v1beta1.NewDuration(10 * time.Second)}
	for _, tc := range []struct {
		name   string
		node   *corev1.Node
		policy v1beta1.Repair
		now    time.Time
		want   Health
	}{
		{name: "Ready: healthy, nothing counting",
			node: nodeWith(cond(corev1.NodeReady, corev1.ConditionTrue, t0)), policy: defaults, now: t0.Add(time.Hour),
			want: Health{}},
		{name: "NotReady for less than 30m: healthy, due at 30m",
			node: nodeWith(cond(corev1.NodeReady, corev1.ConditionFalse, t0)), policy: defaults, now: t0.Add(29 * time.Minute),
			want: Health{Due: t0.Add(30 * time.Minute)}},
		{name: "NotReady for exactly 30m: unhealthy",
			node: nodeWith(cond(corev1.NodeReady, corev1.ConditionFalse, t0)), policy: defaults, now: t0.Add(30 * time.Minute),
			want: Health{Unhealthy: true, Reason: ReasonNotReady, Condition: corev1.NodeReady, Status: corev1.ConditionFalse, Since: t0, Tolerated: 30 * time.Minute}},
		{name: "Unknown for longer than notReadyAfter: unhealthy",
			node: nodeWith(cond(corev1.NodeReady, corev1.ConditionUnknown, t0)), policy: short, now: t0.Add(11 * time.Second),
			want: Health{Unhealthy: true, Reason: ReasonNotReady, Condition: corev1.NodeReady, Status: corev1.ConditionUnknown, Since: t0, Tolerated: 10 * time.Second}},
		{name: "Unknown one second short of notReadyAfter",
			node: nodeWith(cond(corev1.NodeReady, corev1.ConditionUnknown, t0)), policy: short, now: t0.Add(9 * time.Second),
			want: Health{Due: t0.Add(10 * time.Second)}},
		{name: "never posted Ready: not judged, even with a condition that holds",
			node: nodeWith(cond(kernelDeadlock, corev1.ConditionTrue, t0)), policy: withDeadlock, now: t0.Add(time.Hour),
			want: Health{}},
		{name: "no Node: not judged", node: nil, policy: defaults, now: t0, want: Health{}},
		{name: "disabled: healthy however long NotReady",
			node: nodeWith(cond(corev1.NodeReady, corev1.ConditionFalse, t0)), policy: v1beta1.Repair{Enabled: ptr.To(false)}, now: t0.Add(24 * time.Hour),
			want: Health{}},
		{name: "configured condition held past its toleration",
			node:   nodeWith(cond(corev1.NodeReady, corev1.ConditionTrue, t0), cond(kernelDeadlock, corev1.ConditionTrue, t0.Add(time.Minute))),
			policy: withDeadlock, now: t0.Add(6 * time.Minute),
			want: Health{Unhealthy: true, Reason: string(kernelDeadlock), Condition: kernelDeadlock, Status: corev1.ConditionTrue, Since: t0.Add(time.Minute), Tolerated: 5 * time.Minute}},
		{name: "configured condition not yet held long enough",
			node:   nodeWith(cond(corev1.NodeReady, corev1.ConditionTrue, t0), cond(kernelDeadlock, corev1.ConditionTrue, t0.Add(time.Minute))),
			policy: withDeadlock, now: t0.Add(5 * time.Minute),
			want: Health{Due: t0.Add(6 * time.Minute)}},
		{name: "configured condition with another status",
			node:   nodeWith(cond(corev1.NodeReady, corev1.ConditionTrue, t0), cond(kernelDeadlock, corev1.ConditionFalse, t0)),
			policy: withDeadlock, now: t0.Add(time.Hour),
			want: Health{}},
		{name: "a condition the pool does not configure does not count",
			node:   nodeWith(cond(corev1.NodeReady, corev1.ConditionTrue, t0), cond(kernelDeadlock, corev1.ConditionTrue, t0)),
			policy: defaults, now: t0.Add(time.Hour),
			want: Health{}},
		{name: "two rules counting: due at the earlier",
			node:   nodeWith(cond(corev1.NodeReady, corev1.ConditionFalse, t0), cond(kernelDeadlock, corev1.ConditionTrue, t0)),
			policy: withDeadlock, now: t0.Add(time.Minute),
			want: Health{Due: t0.Add(5 * time.Minute)}},
		{name: "two rules held: the one unhealthy first names it",
			node:   nodeWith(cond(corev1.NodeReady, corev1.ConditionFalse, t0), cond(kernelDeadlock, corev1.ConditionTrue, t0)),
			policy: withDeadlock, now: t0.Add(time.Hour),
			want: Health{Unhealthy: true, Reason: string(kernelDeadlock), Condition: kernelDeadlock, Status: corev1.ConditionTrue, Since: t0, Tolerated: 5 * time.Minute}},
		{name: "a condition whose type is no valid reason: the reason is made one, the condition named as it is",
			node:   nodeWith(cond(corev1.NodeReady, corev1.ConditionTrue, t0), cond("example.com/disk-full", corev1.ConditionTrue, t0)),
			policy: v1beta1.Repair{Conditions: []v1beta1.RepairCondition{{Type: "example.com/disk-full", Status: "True", After: v1beta1.Duration{Duration: time.Minute}}}},
			now:    t0.Add(time.Hour),
			want:   Health{Unhealthy: true, Reason: "example_com_disk_full", Condition: "example.com/disk-full", Status: corev1.ConditionTrue, Since: t0, Tolerated: time.Minute}},
		{name: "a condition without a transition time cannot be timed",
			node: nodeWith(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse}), policy: short, now: t0.Add(time.Hour),
			want: Health{}},
		{name: "a negative toleration counts as none",
			node: nodeWith(cond(corev1.NodeReady, corev1.ConditionFalse, t0)), policy: v1beta1.Repair{NotReadyAfter: v1beta1.NewDuration(-time.Minute)}, now: t0,
			want: Health{Unhealthy: true, Reason: ReasonNotReady, Condition: corev1.NodeReady, Status: corev1.ConditionFalse, Since: t0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Assess(tc.node, tc.policy, tc.now); got != tc.want {
				t.Errorf("Assess = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// The reason of the claim's condition must be one the API server takes for a
// metav1.Condition: a letter, then letters, digits, _ , and :, not ending in , or :.
func TestReasonForIsAValidConditionReason(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
	for conditionType, want := range map[string]string{
		"KernelDeadlock":            "KernelDeadlock",
		"ReadonlyFilesystem":        "ReadonlyFilesystem",
		"example.com/disk-full":     "example_com_disk_full",
		"GPU:Xid":                   "GPU:Xid",
		"ends:":                     "ends_",
		"9lives":                    "Condition_9lives",
		"-":                         "Condition__",
		"Ünicode":                   "Condition___nicode",
		"frequent-kubelet-restart,": "frequent_kubelet_restart_",
	} {
		got := ReasonFor(conditionType)
		if got != want {
			t.Errorf("ReasonFor(%q) = %q, want %q", conditionType, got, want)
		}
		if !valid.MatchString(got) {
			t.Errorf("ReasonFor(%q) = %q is not a valid condition reason", conditionType, got)
		}
	}
}

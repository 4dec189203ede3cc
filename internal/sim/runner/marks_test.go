package runner

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// servedSince counts only the pods created at or after the mark, each by the node that
// served it: a burst after the mark onto nodes up before it is existing, the pods of
// before the mark do not count, and a pod that never ran has no path.
func TestServedSince(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	at := func(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }
	registrations := map[string][]nodeRegistration{
		"old":     {{at: at(10), providerID: "fake:///fake-1a/i-old"}},
		"refill":  {{at: at(130), providerID: "fake:///fake-1a/i-refill"}},
		"standby": {{at: at(5), providerID: "fake:///fake-1a/i-standby"}},
	}
	starts := map[string][]time.Time{"i-standby": {at(101)}}
	times := []podTimes{
		{created: at(0), running: at(40), nodeName: "old"},        // before the mark: cold, not counted
		{created: at(100), running: at(101), nodeName: "old"},     // the burst onto the buffer's room
		{created: at(100), running: at(102), nodeName: "old"},     //
		{created: at(100), running: at(115), nodeName: "standby"}, // started from standby for it
		{created: at(120), running: at(140), nodeName: "refill"},  // a node registered after it came
		{created: at(100), nodeName: "old"},                       // never ran
	}
	got := servedSince(times, at(100), registrations, starts)
	want := map[report.Path]int{report.PathExisting: 2, report.PathStandby: 1, report.PathCold: 1}
	if len(got) != len(want) || got[report.PathExisting] != 2 || got[report.PathStandby] != 1 || got[report.PathCold] != 1 {
		t.Errorf("servedSince(the mark) = %v, want %v", got, want)
	}
	if all := servedSince(times, time.Time{}, registrations, starts); all[report.PathCold] != 2 {
		t.Errorf("servedSince(the start) = %v, want 2 cold with the pod of before the mark", all)
	}
}

func TestBuffersShowing(t *testing.T) {
	buffer := func(namespace, name string, conditions ...metav1.Condition) autoscalingv1beta1.CapacityBuffer {
		return autoscalingv1beta1.CapacityBuffer{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Status:     autoscalingv1beta1.CapacityBufferStatus{Conditions: conditions},
		}
	}
	provisioning := func(status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: autoscalingv1beta1.ConditionProvisioning, Status: status, Reason: reason}
	}
	buffers := []autoscalingv1beta1.CapacityBuffer{
		buffer("default", "web", provisioning(metav1.ConditionTrue, "Provisioned")),
		buffer("team-a", "web", provisioning(metav1.ConditionFalse, "NoPoolFits")),
		buffer("team-a", "batch", provisioning(metav1.ConditionTrue, "Provisioned")),
		buffer("default", "new"),
	}
	for _, c := range []struct {
		name string
		want scenario.BufferConditionCount
		n    int
	}{
		{"True by default, every namespace", scenario.BufferConditionCount{Type: "Provisioning"}, 2},
		{"by name in every namespace", scenario.BufferConditionCount{Type: "Provisioning", Buffer: "web"}, 1},
		{"by namespace", scenario.BufferConditionCount{Type: "Provisioning", Namespace: "team-a"}, 1},
		{"False with a reason", scenario.BufferConditionCount{Type: "Provisioning", Status: "False", Reason: "NoPoolFits"}, 1},
		{"another reason", scenario.BufferConditionCount{Type: "Provisioning", Status: "False", Reason: "LimitedByQuotas"}, 0},
		{"a condition no buffer has", scenario.BufferConditionCount{Type: "ReadyForProvisioning", Status: "Unknown"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.want.Count = scenario.Count{AtLeast: ptr.To(0)}
			if got := buffersShowing(buffers, &c.want); got != c.n {
				t.Errorf("buffersShowing = %d, want %d", got, c.n)
			}
		})
	}
}

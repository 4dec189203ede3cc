package provisioning

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/internal/scheduling"
)

func TestBufferConditionSaysWhereTheRoomIsOrWhyNot(t *testing.T) {
	pod := &corev1.Pod{}
	kept := &bufferOutcome{wanted: 2}
	kept.placed("web", placedRunning)
	kept.placed("", placedRunning)
	c := kept.condition(3)
	if c.Status != metav1.ConditionTrue || c.Reason != ReasonRoomKept || c.ObservedGeneration != 3 ||
		!strings.Contains(c.Message, "NodePool web") || !strings.Contains(c.Message, "Nodes of no NodePool") {
		t.Errorf("room kept: %+v", c)
	}

	limited := &bufferOutcome{wanted: 2}
	limited.placed("web", placedRunning)
	limited.unplaced(scheduling.Unschedulable{Pod: pod, Reasons: map[string]string{"web": "the pool's limits.nodes allows no more nodes"}})
	if c := limited.condition(1); c.Status != metav1.ConditionFalse || c.Reason != ReasonLimitsReached || !strings.Contains(c.Message, "1 of 2") {
		t.Errorf("limits: %+v", c)
	}

	mixed := &bufferOutcome{wanted: 1}
	mixed.unplaced(scheduling.Unschedulable{Pod: pod, Reasons: map[string]string{
		"web": "the pool's limits.nodes allows no more nodes", "gpu": "the pod does not tolerate taint gpu",
	}})
	if c := mixed.condition(1); c.Reason != ReasonBufferNoPoolFits || !strings.Contains(c.Message, "NodePool gpu") {
		t.Errorf("no pool fits: %+v", c)
	}

	spare := &bufferOutcome{wanted: 5, standby: true, standbyNodes: map[string]int32{"warm": 2}}
	if c := spare.condition(1); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "2 standby nodes of NodePool warm") {
		t.Errorf("standby: %+v", c)
	}
}

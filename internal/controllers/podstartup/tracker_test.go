package podstartup

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/state"
)

func trackedPod(name string, created int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(at(created))}}
}

// Each milestone of a pod is waited for once; the pod is forgotten once both are seen,
// and a pod recreated under the same name is another pod.
func TestEachMilestoneIsObservedOnce(t *testing.T) {
	tr := NewTracker(10)
	pod := trackedPod("web-0", 0)
	key := keyOf(pod)
	tr.Track([]*corev1.Pod{pod})
	if got := tr.Waiting(key, pod.UID); !slices.Equal(got, Milestones) {
		t.Fatalf("waiting for %v, want %v", got, Milestones)
	}
	if tr.Waiting(key, "another-uid") != nil {
		t.Fatal("a pod recreated under the name must not be tracked")
	}
	tr.Observed(key, pod.UID, MilestoneRunning)
	tr.Track([]*corev1.Pod{pod}) // decided on again: what was observed stays
	if got := tr.Waiting(key, pod.UID); !slices.Equal(got, []Milestone{MilestoneReady}) {
		t.Fatalf("waiting for %v after running, want ready only", got)
	}
	tr.Observed(key, pod.UID, MilestoneReady)
	if tr.Tracked(key, pod.UID) || tr.Len() != 0 {
		t.Fatal("a pod with both milestones observed must be forgotten")
	}
}

// A full tracker makes room by forgetting the pod created first.
func TestAFullTrackerForgetsTheOldestPod(t *testing.T) {
	tr := NewTracker(2)
	old, mid, young := trackedPod("old", -60), trackedPod("mid", -30), trackedPod("young", 0)
	tr.Track([]*corev1.Pod{mid, old})
	tr.Track([]*corev1.Pod{young})
	if tr.Len() != 2 || tr.Tracked(keyOf(old), old.UID) || !tr.Tracked(keyOf(mid), mid.UID) || !tr.Tracked(keyOf(young), young.UID) {
		t.Fatalf("tracked %d pods, old %v: want mid and young", tr.Len(), tr.Tracked(keyOf(old), old.UID))
	}
}

// A new leader learns the pods waiting, and the pods placed on claims that are not
// Ready yet, waiting only for the milestones they have not reached; others' pods and
// Ready pods are not its to measure.
func TestANewLeaderRelearnsFromItsSnapshot(t *testing.T) {
	reservedOn := func(pod *corev1.Pod, claim string) *corev1.Pod {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: v1beta1.TaintReservedKey, Operator: corev1.TolerationOpEqual, Value: claim, Effect: corev1.TaintEffectNoSchedule})
		return pod
	}
	waiting := trackedPod("waiting", 0)
	starting := reservedOn(trackedPod("starting", 0), "c1")
	onNode := reservedOn(trackedPod("on-node", 0), "c2")
	running := reservedOn(trackedPod("running", 0), "c2")
	running.Spec.Containers = []corev1.Container{{Name: "app"}}
	running.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at(15))}}}}
	ready := reservedOn(trackedPod("ready", 0), "c2")
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(20))}}
	unrelated := trackedPod("unrelated", 0)
	// Unreserved pods (a decision of interchangeable pods and claims): placed when their
	// Node of a pool registered after them.
	node := func(name string, created int, pool string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at(created))}}
		if pool != "" {
			n.Labels = map[string]string{v1beta1.LabelNodePool: pool}
		}
		return n
	}
	bound := func(name, node string) *corev1.Pod {
		pod := trackedPod(name, 10)
		pod.Spec.NodeName = node
		return pod
	}
	launched, older, foreign := node("launched", 12, "general"), node("older", 5, "general"), node("foreign", 12, "")
	onLaunched, onOlder, onForeign := bound("on-launched", "launched"), bound("on-older", "older"), bound("on-foreign", "foreign")
	// Unreserved pods on a standby node started for them: placed when their claim lists
	// them.
	warm := node("warm", -600, "general")
	started := &v1beta1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "c3", Annotations: map[string]string{v1beta1.AnnotationPlacedPods: "default/on-started,other/on-started-unlisted"}},
		Status:     v1beta1.NodeClaimStatus{Phase: v1beta1.PhaseStarting},
	}
	onStarted, onStartedUnlisted := bound("on-started", "warm"), bound("on-started-unlisted", "warm")
	tr := NewTracker(10)
	tr.Relearn(state.Snapshot{
		Pending: []*corev1.Pod{waiting},
		Claims:  []state.ClaimState{{Pods: []*corev1.Pod{starting}}, {Claim: started, Node: warm, Pods: []*corev1.Pod{onStarted, onStartedUnlisted}}},
		Nodes: []state.NodeState{
			{Pods: []*corev1.Pod{onNode, running, ready, unrelated}},
			{Node: launched, Pods: []*corev1.Pod{onLaunched}}, {Node: older, Pods: []*corev1.Pod{onOlder}}, {Node: foreign, Pods: []*corev1.Pod{onForeign}},
		},
	})
	for pod, want := range map[*corev1.Pod]bool{
		waiting: true, starting: true, onNode: true, running: true, ready: false, unrelated: false,
		onLaunched: true, onOlder: false, onForeign: false, onStarted: true, onStartedUnlisted: false,
	} {
		if got := tr.Tracked(keyOf(pod), pod.UID); got != want {
			t.Errorf("%s tracked %v, want %v", pod.Name, got, want)
		}
	}
	both := []Milestone{MilestoneRunning, MilestoneReady}
	for pod, want := range map[*corev1.Pod][]Milestone{waiting: both, onNode: both, running: {MilestoneReady}} {
		if got := tr.Waiting(keyOf(pod), pod.UID); !slices.Equal(got, want) {
			t.Errorf("%s waits for %v, want %v: a milestone reached under the leader before is not observed again", pod.Name, got, want)
		}
	}
}

package nodeclaim

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func testClaim(desired v1beta1.DesiredState) *v1beta1.NodeClaim {
	return &v1beta1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Labels: map[string]string{v1beta1.LabelNodePool: "web", "team": "a"}, Annotations: map[string]string{"note": "x"}},
		Spec: v1beta1.NodeClaimSpec{
			NodePool:      "web",
			Taints:        []v1beta1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}},
			StartupTaints: []v1beta1.Taint{{Key: "cni-not-ready", Effect: corev1.TaintEffectNoExecute}},
			DesiredState:  desired,
		},
	}
}

func TestParkedPhases(t *testing.T) {
	// A Node is open to pods only while its claim runs: one launched to run pods opens
	// then too, so that the pods it was launched for can have its room reserved first.
	for _, phase := range v1beta1.Phases {
		want := phase != v1beta1.PhaseRunning && phase != v1beta1.PhaseTerminating
		if got := parked(phase); got != want {
			t.Errorf("parked(%s) = %v, want %v", phase, got, want)
		}
	}
}

func TestShapeNodeAtRegistrationAddsTheClaimsMetadataAndTaints(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"kubernetes.io/hostname": "n"}}}
	if !shapeNode(node, testClaim(v1beta1.DesiredStandby), v1beta1.PhaseInitializing, true) {
		t.Fatal("shapeNode reported no change")
	}
	want := map[string]string{"kubernetes.io/hostname": "n", v1beta1.LabelNodePool: "web", "team": "a", v1beta1.LabelNodeClaim: "web-abc", v1beta1.LabelState: "Initializing"}
	for k, v := range want {
		if node.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	if node.Annotations["note"] != "x" {
		t.Errorf("annotations %v", node.Annotations)
	}
	for _, key := range []string{"dedicated", "cni-not-ready", v1beta1.TaintStandbyKey} {
		found := false
		for _, taint := range node.Spec.Taints {
			found = found || taint.Key == key
		}
		if !found {
			t.Errorf("taint %s missing: %v", key, node.Spec.Taints)
		}
	}
	if !node.Spec.Unschedulable {
		t.Error("a Node meant for standby must be cordoned from registration")
	}
	if shapeNode(node, testClaim(v1beta1.DesiredStandby), v1beta1.PhaseInitializing, true) {
		t.Error("shaping twice must change nothing")
	}
}

func TestShapeNodeLeavesRemovedStartupTaintsAloneAfterRegistration(t *testing.T) {
	node := &corev1.Node{}
	shapeNode(node, testClaim(v1beta1.DesiredStandby), v1beta1.PhaseWarmingUp, false)
	for _, taint := range node.Spec.Taints {
		if taint.Key == "cni-not-ready" || taint.Key == "dedicated" {
			t.Fatalf("after registration shapeNode added taint %s", taint.Key)
		}
	}
}

func TestShapeNodeForRunningLiftsStandbyTaintAndCordonOnly(t *testing.T) {
	node := &corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{
		v1beta1.StandbyTaint, {Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule},
	}}}
	shapeNode(node, testClaim(v1beta1.DesiredRunning), v1beta1.PhaseRunning, false)
	if node.Spec.Unschedulable || len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "node.kubernetes.io/not-ready" {
		t.Fatalf("running Node: unschedulable %v taints %v", node.Spec.Unschedulable, node.Spec.Taints)
	}
	if node.Labels[v1beta1.LabelState] != "Running" {
		t.Errorf("state label %q", node.Labels[v1beta1.LabelState])
	}
}

func TestShapeNodeForTerminatingCordons(t *testing.T) {
	node := &corev1.Node{}
	shapeNode(node, testClaim(v1beta1.DesiredRunning), v1beta1.PhaseTerminating, false)
	if !node.Spec.Unschedulable {
		t.Fatal("a terminating Node must be cordoned")
	}
}

func TestShapeNodeKeepsAnInterruptedRunningNodeCordoned(t *testing.T) {
	for kind, cordoned := range map[v1beta1.InterruptionKind]bool{
		v1beta1.InterruptionSpot:            true,
		v1beta1.InterruptionScheduledChange: true,
		v1beta1.InterruptionRebalance:       false,
	} {
		claim := testClaim(v1beta1.DesiredRunning)
		claim.Status.Interruption = &v1beta1.Interruption{Kind: kind}
		node := &corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{v1beta1.StandbyTaint}}}
		shapeNode(node, claim, v1beta1.PhaseRunning, false)
		if node.Spec.Unschedulable != cordoned {
			t.Errorf("%s: a running Node's unschedulable is %v, want %v", kind, node.Spec.Unschedulable, cordoned)
		}
	}
}

// A cordon without the standby taint is someone else's, an administrator's say:
// reaching Running leaves it.
func TestShapeNodeForRunningLeavesACordonItDidNotMake(t *testing.T) {
	node := &corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}}
	shapeNode(node, testClaim(v1beta1.DesiredRunning), v1beta1.PhaseRunning, false)
	if !node.Spec.Unschedulable {
		t.Fatal("a running Node cordoned by someone else was uncordoned")
	}
}

func readyNode(status corev1.ConditionStatus, transition, heartbeat time.Time) *corev1.Node {
	return &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(transition), LastHeartbeatTime: metav1.NewTime(heartbeat)},
	}}}
}

func TestNotInitialized(t *testing.T) {
	claim := testClaim(v1beta1.DesiredRunning)
	now := time.Now()
	node := readyNode(corev1.ConditionFalse, now, now)
	if why := notInitialized(node, claim); why != "the Node is not Ready" {
		t.Errorf("not ready: %q", why)
	}
	node = readyNode(corev1.ConditionTrue, now, now)
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionTrue})
	if why := notInitialized(node, claim); why != "the Node's network is not ready" {
		t.Errorf("network down: %q", why)
	}
	node = readyNode(corev1.ConditionTrue, now, now)
	node.Spec.Taints = []corev1.Taint{{Key: "cni-not-ready", Effect: corev1.TaintEffectNoExecute}}
	if why := notInitialized(node, claim); why != "startup taint cni-not-ready is still on the Node" {
		t.Errorf("startup taint: %q", why)
	}
	node.Spec.Taints = nil
	if why := notInitialized(node, claim); why != "" {
		t.Errorf("initialised Node: %q", why)
	}
}

func TestReadySinceWantsAReportAfterTheStart(t *testing.T) {
	started := time.Date(2026, 1, 1, 12, 0, 0, 500_000_000, time.UTC)
	before := started.Add(-time.Minute)
	after := started.Add(2 * time.Second)
	if readySince(readyNode(corev1.ConditionTrue, before, before), started) {
		t.Error("a Ready reported before the start is stale")
	}
	if !readySince(readyNode(corev1.ConditionTrue, after, after), started) {
		t.Error("a Ready reported after the start counts")
	}
	if !readySince(readyNode(corev1.ConditionTrue, before, after), started) {
		t.Error("a heartbeat after the start counts even without a transition")
	}
	if readySince(readyNode(corev1.ConditionFalse, after, after), started) {
		t.Error("NotReady is not Ready")
	}
}

func TestAddMissingLabelsKeepsWhatTheNodeSays(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{v1beta1.LabelInstanceHypervisor: "xen"}}}
	attrs := map[string]string{v1beta1.LabelInstanceHypervisor: "nitro", v1beta1.LabelInstanceCPU: "4", v1beta1.LabelInstanceGPUName: ""}
	if !addMissingLabels(node, attrs) {
		t.Fatal("addMissingLabels reported no change")
	}
	want := map[string]string{v1beta1.LabelInstanceHypervisor: "xen", v1beta1.LabelInstanceCPU: "4", v1beta1.LabelInstanceGPUName: ""}
	if len(node.Labels) != len(want) {
		t.Fatalf("labels %v, want %v", node.Labels, want)
	}
	for k, v := range want {
		if got, ok := node.Labels[k]; !ok || got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if addMissingLabels(node, attrs) {
		t.Error("a second pass changed the Node")
	}
	bare := &corev1.Node{}
	if !addMissingLabels(bare, attrs) || bare.Labels[v1beta1.LabelInstanceCPU] != "4" {
		t.Errorf("a Node without labels got %v", bare.Labels)
	}
}

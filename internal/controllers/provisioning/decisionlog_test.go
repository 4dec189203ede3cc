package provisioning

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/test/logcapture"
)

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

// A decision counts as the costliest thing it did.
func TestADecisionsOutcomeIsTheCostliestThingItDid(t *testing.T) {
	p := pod("a")
	cases := []struct {
		name string
		r    scheduling.Result
		want outcome
	}{
		{"room on a node", scheduling.Result{Existing: map[*corev1.Pod]string{p: "n1"}}, outcomeExisting},
		{"room on a claim coming", scheduling.Result{InFlight: map[*corev1.Pod]string{p: "c1"}}, outcomeExisting},
		{"a standby start", scheduling.Result{Starts: []scheduling.Start{{Claim: "c1"}}}, outcomeStart},
		{"a start and a launch", scheduling.Result{Starts: []scheduling.Start{{Claim: "c1"}}, Launches: []scheduling.Launch{{Pool: "web"}}}, outcomeLaunch},
		{"a start and a pod that fits nowhere", scheduling.Result{Starts: []scheduling.Start{{Claim: "c1"}}, Unschedulable: []scheduling.Unschedulable{{Pod: p}}}, outcomeStart},
		{"only pods that fit nowhere", scheduling.Result{Unschedulable: []scheduling.Unschedulable{{Pod: p}}, Existing: map[*corev1.Pod]string{pod("b"): "n1"}}, outcomeUnschedulable},
	}
	for _, tc := range cases {
		if got := outcomeOf(tc.r); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func hasKeys(t *testing.T, line map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got, ok := line[k]; !ok || fmt.Sprint(got) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v (line %v)", k, got, v, line)
		}
	}
}

// A decision that starts, launches or leaves pods waiting is an INFO line with the pods
// (a count and a few names), what became of them and the pools that act for them.
func TestADecisionThatActsIsLoggedAtInfo(t *testing.T) {
	log, lines := logcapture.New(t, 0)
	var pods []*corev1.Pod
	for i := range 7 {
		pods = append(pods, pod(fmt.Sprintf("web-%d", i)))
	}
	r := scheduling.Result{
		Existing:      map[*corev1.Pod]string{pods[0]: "n1"},
		Starts:        []scheduling.Start{{Claim: "web-abc", Pods: pods[1:3]}},
		Launches:      []scheduling.Launch{{Pool: "batch", Pods: pods[3:6]}},
		Unschedulable: []scheduling.Unschedulable{{Pod: pods[6], Reasons: map[string]string{"web": "Insufficient cpu"}}},
	}
	logDecision(log, pods, r, map[string]string{"web-abc": "web"}, 42*time.Millisecond)
	if len(*lines) != 1 {
		t.Fatalf("%d lines at INFO, want 1", len(*lines))
	}
	hasKeys(t, (*lines)[0], map[string]any{
		"msg": "Found provisionable pod(s)", "level": 0, "pods": 7,
		"podNames": "default/web-0, default/web-1, default/web-2, default/web-3, default/web-4 and 2 other(s)",
		"existing": 1, "inFlight": 0, "started": 1, "launched": 1, "unschedulable": 1, "nodepools": "batch, web", "took": "42ms",
	})
}

// A decision that only finds room already there stays out of the INFO log.
func TestADecisionThatFindsRoomIsLoggedAtDebug(t *testing.T) {
	r := scheduling.Result{Existing: map[*corev1.Pod]string{pod("a"): "n1"}}
	log, lines := logcapture.New(t, 0)
	logDecision(log, []*corev1.Pod{pod("a")}, r, nil, time.Millisecond)
	if len(*lines) != 0 {
		t.Fatalf("at INFO: %v, want nothing", *lines)
	}
	log, lines = logcapture.New(t, 1)
	logDecision(log, []*corev1.Pod{pod("a")}, r, nil, time.Millisecond)
	if len(*lines) != 1 || (*lines)[0]["level"] != float64(1) {
		t.Fatalf("at V(1): %v, want the decision line", *lines)
	}
}

// Each claim started or launched, and the pods left waiting, are INFO lines of their
// own, naming the pool, the claim, where it runs or may launch, and why pods wait.
func TestStartsLaunchesAndUnschedulablePodsAreLoggedAtInfo(t *testing.T) {
	log, lines := logcapture.New(t, 0)
	claim := &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-abc"}, Spec: v1beta1.NodeClaimSpec{NodePool: "web"},
		Status: v1beta1.NodeClaimStatus{NodeName: "ip-10-0-0-1", InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand"}}
	logStart(log, claim, []*corev1.Pod{pod("a")})
	launched := &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "batch-xyz"}}
	logLaunch(log, launched, scheduling.Launch{Pool: "batch", InstanceTypes: []string{"c5.large", "m5.large", "c5.xlarge", "m5.xlarge", "r5.large", "r5.xlarge"},
		Zones: []string{"us-east-1b"}, PricePerHour: 0.085, Pods: []*corev1.Pod{pod("b"), pod("c")}})
	logUnschedulable(log, []scheduling.Unschedulable{{Pod: pod("d"), Reasons: map[string]string{"web": "Insufficient cpu", "batch": "node selector"}}})
	if len(*lines) != 3 {
		t.Fatalf("%d lines, want 3: %v", len(*lines), *lines)
	}
	hasKeys(t, (*lines)[0], map[string]any{"msg": "Starting standby node for pod(s)", "nodepool": "web", "nodeclaim": "web-abc", "node": "ip-10-0-0-1",
		"instanceType": "m5.large", "zone": "us-east-1a", "pods": 1, "podNames": "default/a"})
	hasKeys(t, (*lines)[1], map[string]any{"msg": "Launching nodeclaim for pod(s)", "nodepool": "batch", "nodeclaim": "batch-xyz",
		"instanceTypes": "c5.large, m5.large, c5.xlarge, m5.xlarge, r5.large and 1 other(s)", "zones": "us-east-1b", "pricePerHour": 0.085, "pods": 2})
	hasKeys(t, (*lines)[2], map[string]any{"msg": "Pod(s) left unschedulable", "pods": 1, "pod": "default/d",
		"why": "NodePool batch: node selector; NodePool web: Insufficient cpu"})
}

package explain

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/state"
)

// The claim a pod was placed on is its last reservation toleration: tolerations only
// grow, and provisioning appends the newest.
func TestReservedForIsTheLastReservation(t *testing.T) {
	p := pod(reservedOn("web-old"), func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "other", Operator: corev1.TolerationOpExists})
	}, reservedOn("web-new"))
	if got := ReservedFor(p); got != "web-new" {
		t.Fatalf("reserved for %q, want web-new", got)
	}
	if got := ReservedFor(pod()); got != "" {
		t.Fatalf("a pod without reservation is reserved for %q", got)
	}
}

// An Event reads the same whether the events API wrote it (eventTime, series, the
// reporting controller) or the older recorder did (timestamps, count, source).
func TestEventOfReadsBothRecorders(t *testing.T) {
	newer := EventOf(&corev1.Event{Reason: "NoNodePoolFits", Type: "Warning", ReportingController: "stratos",
		EventTime: metav1.NewMicroTime(t0), Series: &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(t0.Add(time.Minute))}})
	if newer.Source != "stratos" || newer.Count != 4 || !newer.Last.Equal(t0.Add(time.Minute)) {
		t.Errorf("events API Event read as %+v", newer)
	}
	older := EventOf(&corev1.Event{Reason: "FailedScheduling", Source: corev1.EventSource{Component: "default-scheduler"},
		FirstTimestamp: metav1.NewTime(t0), LastTimestamp: metav1.NewTime(t0.Add(2 * time.Minute)), Count: 7})
	if older.Source != "default-scheduler" || older.Count != 7 || !older.Last.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("core Event read as %+v", older)
	}
	once := EventOf(&corev1.Event{Reason: "Nominated", EventTime: metav1.NewMicroTime(t0)})
	if once.Count != 1 {
		t.Errorf("an Event seen once counts %d", once.Count)
	}
}

// Whether explain says Stratos looks for capacity for a pod is what provisioning
// decides (internal/state's Provisionable), pod by pod.
func TestScopeAgreesWithProvisioning(t *testing.T) {
	pods := map[string]*corev1.Pod{
		"unschedulable": pod(unschedulable),
		"not tried":     pod(),
		"bound":         pod(unschedulable, func(p *corev1.Pod) { p.Spec.NodeName = "n1" }),
		"deleting":      pod(unschedulable, func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(at(5)) }),
		"preempting":    pod(unschedulable, func(p *corev1.Pod) { p.Status.NominatedNodeName = "n1" }),
		"mirror":        pod(unschedulable, func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }),
		"daemonset": pod(unschedulable, func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "d", Controller: ptr.To(true)}}
		}),
		"opted out":     pod(unschedulable, func(p *corev1.Pod) { p.Annotations = map[string]string{v1beta1.AnnotationDoNotProvision: "true"} }),
		"opt-out false": pod(unschedulable, func(p *corev1.Pod) { p.Annotations = map[string]string{v1beta1.AnnotationDoNotProvision: "false"} }),
		"gated": pod(func(p *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/quota"}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}
		}),
		"scheduled": pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		}),
	}
	for name, p := range pods {
		s := scopeOf(p)
		if want := state.Provisionable(p); s.Provisionable != want {
			t.Errorf("%s: explain says provisionable %v (%s), provisioning %v", name, s.Provisionable, s.Why, want)
		}
		if !s.Provisionable && s.Why == "" {
			t.Errorf("%s: left out without a reason", name)
		}
	}
}

// The text names the summary, the claim, the path and the latency; the JSON carries the
// same fields under stable names.
func TestWriteTextAndJSON(t *testing.T) {
	now := t0.Add(time.Minute)
	e := Explain(Facts{Now: now, Pod: pod(ranOn("n1", 14, 15, 16)), Node: node("n1", -3600), ClaimName: "web-a",
		Claim: claim("web-a", -3600, phase(v1beta1.PhaseRunning, 13, v1beta1.DesiredRunning), condition(v1beta1.ConditionStarted, metav1.ConditionTrue, "Started", "", 2))})
	var text bytes.Buffer
	if err := WriteText(&text, e, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Pod shop/web-1 (Running)", "NodeClaim:", "web-a of NodePool web: phase Running since 2026-11-27T10:00:13Z (47s ago)", "Path:", "standby", "Latency:", "scheduled after 14s, running after 15s, ready after 16s"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text does not say %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, e); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Path      string `json:"path"`
		NodeClaim struct {
			Name     string `json:"name"`
			NodePool string `json:"nodePool"`
		} `json:"nodeClaim"`
		Latency struct {
			Ready float64 `json:"readySeconds"`
		} `json:"latency"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Path != "standby" || got.NodeClaim.Name != "web-a" || got.NodeClaim.NodePool != "web" || got.Latency.Ready != 16 {
		t.Errorf("JSON %s", js.String())
	}
}

// A time not recorded is left out of the JSON rather than written as year 1.
func TestJSONLeavesOutTimesNotRecorded(t *testing.T) {
	var js bytes.Buffer
	if err := WriteJSON(&js, Explain(Facts{Pod: pod(), Now: t0})); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(js.String(), "0001-01-01") || strings.Contains(js.String(), `"since"`) {
		t.Fatalf("JSON of a pod never tried by kube-scheduler: %s", js.String())
	}
}

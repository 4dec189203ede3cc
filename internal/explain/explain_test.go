package explain

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func at(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }

// pod is a pod created at t0; tune changes it.
func pod(tune ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", CreationTimestamp: at(0)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	for _, f := range tune {
		f(p)
	}
	return p
}

func unschedulable(p *corev1.Pod) {
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient cpu.", LastTransitionTime: at(1)})
}

func reservedOn(claim string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: v1beta1.TaintReservedKey, Operator: corev1.TolerationOpEqual, Value: claim, Effect: corev1.TaintEffectNoSchedule})
	}
}

// ranOn binds the pod to node at scheduled seconds, its container started at running
// and Ready at ready.
func ranOn(node string, scheduled, running, ready int) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(scheduled)},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(ready)},
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(running)}}}}
	}
}

func node(name string, created int) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created)}}
}

// claim is a claim of pool web created at created seconds; tune changes it.
func claim(name string, created int, tune ...func(*v1beta1.NodeClaim)) *v1beta1.NodeClaim {
	c := &v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created)}, Spec: v1beta1.NodeClaimSpec{NodePool: "web"}}
	for _, f := range tune {
		f(c)
	}
	return c
}

func phase(p v1beta1.NodeClaimPhase, since int, desired v1beta1.DesiredState) func(*v1beta1.NodeClaim) {
	return func(c *v1beta1.NodeClaim) {
		c.Status.Phase, c.Status.LastPhaseChangeTime, c.Spec.DesiredState = p, ptr.To(at(since)), desired
	}
}

func condition(t string, status metav1.ConditionStatus, reason, message string, when int) func(*v1beta1.NodeClaim) {
	return func(c *v1beta1.NodeClaim) {
		c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: at(when)})
	}
}

func pool(name string, tune ...func(*v1beta1.NodePool)) v1beta1.NodePool {
	p := v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, f := range tune {
		f(&p)
	}
	return p
}

func providerEvent(reason, message string, last int) Event {
	return Event{Type: corev1.EventTypeWarning, Reason: reason, Message: message, Source: "stratos", Count: 1, Last: at(last).Time}
}

func TestExplain(t *testing.T) {
	now := t0.Add(time.Minute)
	cases := []struct {
		name  string
		facts Facts
		// What the explanation must say.
		path     Path
		summary  []string
		blockers []string // "Kind/NodePool"
		latency  *[3]float64
		scope    *bool
	}{
		{
			name:    "a pod a standby node was started for",
			facts:   Facts{Pod: pod(ranOn("n1", 14, 15, 16)), Node: node("n1", -3600), ClaimName: "web-a", Claim: claim("web-a", -3600, phase(v1beta1.PhaseRunning, 13, v1beta1.DesiredRunning), condition(v1beta1.ConditionStarted, metav1.ConditionTrue, "Started", "", 2))},
			path:    PathStandby,
			summary: []string{"Running on node n1 (NodeClaim web-a of NodePool web): started from standby for it", "scheduled after 14s, running after 15s, ready after 16s"},
			latency: &[3]float64{14, 15, 16},
		},
		{
			name:    "a pod a node was launched for",
			facts:   Facts{Pod: pod(ranOn("n2", 41, 44, 45)), Node: node("n2", 40), ClaimName: "web-b", Claim: claim("web-b", 1, phase(v1beta1.PhaseRunning, 41, v1beta1.DesiredRunning))},
			path:    PathCold,
			summary: []string{"launched cold for it"},
			latency: &[3]float64{41, 44, 45},
		},
		{
			name:    "a pod that found room on a node started before it, for others",
			facts:   Facts{Pod: pod(ranOn("n1", 1, 2, 3)), Node: node("n1", -3600), ClaimName: "web-a", Claim: claim("web-a", -3600, condition(v1beta1.ConditionStarted, metav1.ConditionTrue, "Started", "", -30))},
			path:    PathExisting,
			summary: []string{"the node was serving already"},
		},
		{
			name:    "a pod on a node Stratos does not own",
			facts:   Facts{Pod: pod(ranOn("mng-1", 1, 2, 3)), Node: node("mng-1", -9000)},
			path:    PathNotStratos,
			summary: []string{"Running on node mng-1: the node is not one of Stratos's"},
		},
		{
			name:    "a pod whose Node is gone",
			facts:   Facts{Pod: pod(ranOn("gone", 1, 2, 3))},
			path:    PathUnknown,
			summary: []string{"its Node is gone"},
		},
		{
			name:    "a pod kube-scheduler has not tried",
			facts:   Facts{Pod: pod()},
			scope:   ptr.To(false),
			summary: []string{"Pending. Stratos does not look for capacity for it: kube-scheduler has not tried to schedule it yet"},
		},
		{
			name:    "a pod opted out",
			facts:   Facts{Pod: pod(unschedulable, func(p *corev1.Pod) { p.Annotations = map[string]string{v1beta1.AnnotationDoNotProvision: "true"} })},
			scope:   ptr.To(false),
			summary: []string{"stratos.sh/do-not-provision: \"true\" opts it out"},
		},
		{
			name: "a DaemonSet's pod",
			facts: Facts{Pod: pod(unschedulable, func(p *corev1.Pod) {
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "u", Controller: ptr.To(true)}}
			})},
			scope:   ptr.To(false),
			summary: []string{"a DaemonSet's pod"},
		},
		{
			name: "a pod a standby node is starting for",
			facts: Facts{Pod: pod(unschedulable, reservedOn("web-a")), ClaimName: "web-a",
				Claim: claim("web-a", -3600, phase(v1beta1.PhaseStarting, 2, v1beta1.DesiredRunning), condition(v1beta1.ConditionStarted, metav1.ConditionTrue, "Started", "", 2))},
			scope:   ptr.To(true),
			path:    PathStandby,
			summary: []string{"Stratos placed it on NodeClaim web-a of NodePool web, a standby node started for it; the claim is Starting since 2026-11-27T10:00:02Z (58s ago)"},
		},
		{
			name: "a pod placed on a standby claim not started yet",
			facts: Facts{Pod: pod(unschedulable, reservedOn("web-a")), ClaimName: "web-a",
				Claim: claim("web-a", -3600, phase(v1beta1.PhaseStandby, -1800, v1beta1.DesiredRunning))},
			path:    PathStandby,
			summary: []string{"a standby node started for it; the claim is Standby"},
		},
		{
			name: "a pod whose launch the cloud refuses",
			facts: Facts{Pod: pod(unschedulable, reservedOn("web-old"), reservedOn("web-c")), ClaimName: "web-c",
				Claim: claim("web-c", 2, phase(v1beta1.PhaseLaunching, 2, v1beta1.DesiredRunning), condition(v1beta1.ConditionLaunched, metav1.ConditionFalse, "InsufficientCapacity", "no m5.large in eu-west-1a", 5))},
			path:     PathCold,
			summary:  []string{"NodeClaim web-c of NodePool web, a node launched for it; the claim is Launching"},
			blockers: []string{"InsufficientCapacity/web"},
		},
		{
			name: "a pod placed on a claim already on its way",
			facts: Facts{Pod: pod(unschedulable, reservedOn("web-d")), ClaimName: "web-d",
				Claim: claim("web-d", -5, phase(v1beta1.PhaseRegistering, -3, v1beta1.DesiredRunning))},
			path:    PathInFlight,
			summary: []string{"a node already on its way for other pods"},
		},
		{
			name: "a pod in a paused pool's claim",
			facts: Facts{Pod: pod(unschedulable, reservedOn("web-a")), ClaimName: "web-a",
				Claim: claim("web-a", -3600, phase(v1beta1.PhaseStandby, -1800, v1beta1.DesiredRunning)),
				Pools: []v1beta1.NodePool{pool("web", func(p *v1beta1.NodePool) { p.Spec.Paused = true })}},
			path:     PathStandby,
			blockers: []string{"Paused/web"},
		},
		{
			name:    "a pod whose claim is gone",
			facts:   Facts{Pod: pod(unschedulable, reservedOn("web-x")), ClaimName: "web-x"},
			summary: []string{"placed it on NodeClaim web-x, which is gone"},
		},
		{
			name: "a pod no pool fits, with a pool paused",
			facts: Facts{Pod: pod(unschedulable),
				PodEvents: []Event{
					providerEvent("NoNodePoolFits", "No node can be made for the pod. NodePool old: no instance type holds the pod's requests", 10),
					providerEvent("NoNodePoolFits", "No node can be made for the pod. no NodePool can make nodes", 20),
					{Type: corev1.EventTypeWarning, Reason: "FailedScheduling", Message: "0/3 nodes are available", Source: "default-scheduler", Last: at(30).Time},
				},
				Pools: []v1beta1.NodePool{pool("web", func(p *v1beta1.NodePool) { p.Spec.Paused = true }), pool("batch")}},
			scope:    ptr.To(true),
			summary:  []string{"Pending. No NodePool can make a node for it: no NodePool can make nodes"},
			blockers: []string{"Paused/web"},
		},
		{
			name: "a pod a pool's limits keep out",
			facts: Facts{Pod: pod(unschedulable),
				PodEvents: []Event{providerEvent("NoNodePoolFits", "No node can be made for the pod. NodePool capped: the pool's limits.nodes allows no more nodes", 3)},
				Pools: []v1beta1.NodePool{pool("capped", func(p *v1beta1.NodePool) {
					p.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionDegraded, Status: metav1.ConditionTrue, Reason: "LimitReached", Message: "limits.nodes 2 reached"}}
				}), pool("killed", func(p *v1beta1.NodePool) { p.Spec.KillSwitch = true })}},
			summary:  []string{"NodePool capped: the pool's limits.nodes allows no more nodes"},
			blockers: []string{"LimitReached/capped", "KillSwitch/killed"},
		},
		{
			name: "a pod its volumes keep waiting",
			facts: Facts{Pod: pod(unschedulable),
				PodEvents: []Event{providerEvent("WaitingForVolumes", "No node is made for the pod until its volumes allow: PersistentVolumeClaim data is not bound", 3)}},
			summary:  []string{"Its volumes keep it waiting", "data is not bound"},
			blockers: []string{"WaitingForVolumes/"},
		},
		{
			name:    "a pod nothing was decided on yet",
			facts:   Facts{Pod: pod(unschedulable)},
			scope:   ptr.To(true),
			summary: []string{"marked it Unschedulable 2026-11-27T10:00:01Z (59s ago)", "recorded no decision"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.facts.Now = now
			e := Explain(tc.facts)
			if e.Path != tc.path {
				t.Errorf("path %q, want %q", e.Path, tc.path)
			}
			for _, s := range tc.summary {
				if !strings.Contains(e.Summary, s) {
					t.Errorf("summary %q does not say %q", e.Summary, s)
				}
			}
			var blockers []string
			for _, b := range e.Blockers {
				blockers = append(blockers, b.Kind+"/"+b.NodePool)
			}
			if tc.blockers != nil && strings.Join(blockers, ",") != strings.Join(tc.blockers, ",") {
				t.Errorf("blockers %v, want %v", blockers, tc.blockers)
			}
			if tc.latency != nil {
				l := e.Latency
				if l == nil || l.Scheduled == nil || l.Running == nil || l.Ready == nil ||
					*l.Scheduled != tc.latency[0] || *l.Running != tc.latency[1] || *l.Ready != tc.latency[2] {
					t.Errorf("latency %+v, want scheduled, running, ready after %v", l, *tc.latency)
				}
			}
			if tc.scope != nil && (e.Scope == nil || e.Scope.Provisionable != *tc.scope) {
				t.Errorf("scope %+v, want provisionable %v", e.Scope, *tc.scope)
			}
		})
	}
}

// TestExplainSaysWhetherAPendingPodOptsIn: beside another autoscaler Stratos serves only
// pods that opt in, and the command cannot read the operator's scope, so it says which
// the pod is, and what a pod that is not depends on.
func TestExplainSaysWhetherAPendingPodOptsIn(t *testing.T) {
	gpuPool := pool("gpu", func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.Taints = []v1beta1.Taint{{Key: "example.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
	})
	cases := []struct {
		name    string
		pod     *corev1.Pod
		optedIn bool
	}{
		{"plain", pod(unschedulable), false},
		{"selects a pool", pod(unschedulable, func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{v1beta1.LabelNodePool: "gpu"} }), true},
		{"tolerates a pool's taint", pod(unschedulable, func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		}), true},
		{"tolerates everything", pod(unschedulable, func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := Explain(Facts{Pod: c.pod, Pools: []v1beta1.NodePool{gpuPool}, Now: t0.Add(time.Minute)})
			if e.Scope == nil || e.Scope.OptedIn != c.optedIn {
				t.Fatalf("scope %+v, want opted in %v", e.Scope, c.optedIn)
			}
			var text bytes.Buffer
			if err := WriteText(&text, e, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if said := strings.Contains(text.String(), "--pod-scope=all"); said == c.optedIn {
				t.Errorf("the text names the pod scope: %v, want %v:\n%s", said, !c.optedIn, text.String())
			}
		})
	}
}

package provisioning_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/explain"
	"github.com/stratos-sh/stratos/test/stack"
)

// explainPod reads and explains a pod as `stratos explain pod` does.
func explainPod(f *stack.Fixture, pod *corev1.Pod) explain.Explanation {
	f.T.Helper()
	facts, err := explain.Read(f.Ctx, f.Env.Client, client.ObjectKeyFromObject(pod), time.Now())
	if err != nil {
		f.T.Fatal(err)
	}
	return explain.Explain(facts)
}

// A pod a standby node was started for: while it waits, explain names the claim it was
// placed on and the start from standby; once it runs, the node, the claim, its pool, the
// path and how long the pod took to be scheduled, to run and to be Ready, as its own
// timestamps say.
func TestExplainAPodServedFromStandby(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("explain-warm", 1, nil)
	standby := f.WaitForPhase("explain-warm", 1, v1beta1.PhaseStandby)[0]
	pod := pendingPods(f, "default", "explain-warm", 1, "100m", "128Mi", nil)[0]

	var waiting explain.Explanation
	f.Eventually("explain says the waiting pod's standby node starts for it", func() bool {
		waiting = explainPod(f, pod)
		return waiting.Path == explain.PathStandby
	})
	if waiting.NodeClaim == nil || waiting.NodeClaim.Name != standby.Name || waiting.NodeClaim.NodePool != "explain-warm" {
		t.Fatalf("the waiting pod's claim is %+v, want %s of explain-warm", waiting.NodeClaim, standby.Name)
	}
	if !strings.Contains(waiting.Summary, "Stratos placed it on NodeClaim "+standby.Name) || !waiting.Scope.Provisionable {
		t.Fatalf("the waiting pod is explained as %+v", waiting)
	}
	// One pod on one claim reserves nothing: no write to the pod, and explain named the
	// claim from the claim's list of the pods placed on it.
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	if reserved := explain.ReservedFor(pod); reserved != "" {
		t.Errorf("the lone pod was given a reservation toleration of %s", reserved)
	}

	started := f.WaitForClaim(standby.Name, v1beta1.PhaseRunning)
	bind(f, pod, started.Status.NodeName)
	f.Eventually("the pod runs and is Ready", func() bool {
		if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			t.Fatal(err)
		}
		return pod.Status.Phase == corev1.PodRunning && meta.IsStatusConditionTrue(podConditions(pod), string(corev1.PodReady))
	})
	e := explainPod(f, pod)
	if e.Path != explain.PathStandby || e.Node != started.Status.NodeName || e.NodeClaim == nil || e.NodeClaim.Name != standby.Name || e.NodeClaim.NodePool != "explain-warm" {
		t.Fatalf("the running pod is explained as path %q on node %q, claim %+v; want standby on %s, claim %s of explain-warm", e.Path, e.Node, e.NodeClaim, started.Status.NodeName, standby.Name)
	}
	if !strings.Contains(e.Summary, "started from standby for it") {
		t.Errorf("summary %q does not say the node started from standby", e.Summary)
	}
	// The claim's Events are read where the recorder keeps them: its start is among them.
	facts, err := explain.Read(f.Ctx, f.Env.Client, client.ObjectKeyFromObject(pod), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(facts.ClaimEvents, func(e explain.Event) bool { return e.Reason == "Starting" }) {
		t.Errorf("the claim's Events %+v lack its start", facts.ClaimEvents)
	}
	_, ready := expectedStartup(t, pod)
	if e.Latency == nil || e.Latency.Ready == nil || *e.Latency.Ready != ready {
		t.Fatalf("latency %+v, want Ready after %.0fs as the pod's timestamps say", e.Latency, ready)
	}
	var text bytes.Buffer
	if err := explain.WriteText(&text, e, time.Now()); err != nil {
		t.Fatal(err)
	}
	t.Logf("stratos explain pod %s:\n%s", pod.Name, text.String())
}

// Pending pods blocked by a paused pool and by a pool's limits: explain says which pool
// and why, from provisioning's Event and the pools' specs.
func TestExplainAPodBlockedByAPausedPoolOrLimits(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("explain-paused", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": "paused"}
		p.Spec.Paused = true
	})
	f.Pool("explain-capped", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": "capped"}
		p.Spec.Limits = v1beta1.Limits{v1beta1.LimitNodes: resource.MustParse("0")}
	})
	selecting := func(team string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"example.com/team": team} }
	}
	paused := pendingPods(f, "default", "explain-paused", 1, "100m", "128Mi", selecting("paused"))[0]
	capped := pendingPods(f, "default", "explain-capped", 1, "100m", "128Mi", selecting("capped"))[0]

	var e explain.Explanation
	f.Eventually("explain says no pool can take the paused pool's pod", func() bool {
		e = explainPod(f, paused)
		return len(e.Provisioning) > 0
	})
	if !strings.HasPrefix(e.Summary, "Pending. No NodePool can make a node for it") {
		t.Errorf("summary %q", e.Summary)
	}
	var pausedBlocker *explain.Blocker
	for i, b := range e.Blockers {
		if b.Kind == "Paused" && b.NodePool == "explain-paused" {
			pausedBlocker = &e.Blockers[i]
		}
	}
	if pausedBlocker == nil {
		t.Fatalf("blockers %+v do not name the paused pool", e.Blockers)
	}

	f.Eventually("explain says the capped pool's limits keep its pod out", func() bool {
		e = explainPod(f, capped)
		return len(e.Provisioning) > 0
	})
	if !strings.Contains(e.Summary, "NodePool explain-capped: the pool's limits.nodes allows no more nodes") {
		t.Errorf("summary %q does not name the pool's limits", e.Summary)
	}
	if len(f.Claims("explain-paused"))+len(f.Claims("explain-capped")) != 0 {
		t.Fatal("a claim was made for a blocked pod")
	}
}

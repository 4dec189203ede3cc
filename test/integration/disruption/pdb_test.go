package disruption_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/stack"
)

// guard makes a PodDisruptionBudget for the pods labelled app, with the status
// kube-controller-manager's disruption controller would write (the harness runs none):
// healthy pods, of which the budget lets allowed go.
func guard(f *stack.Fixture, app string, healthy, allowed int32) *policyv1.PodDisruptionBudget {
	f.T.Helper()
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(healthy - allowed)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
	}
	f.Create(pdb)
	allow(f, pdb, healthy, allowed)
	return pdb
}

// allow writes the budget's status anew: healthy pods, of which it lets allowed go.
func allow(f *stack.Fixture, pdb *policyv1.PodDisruptionBudget, healthy, allowed int32) {
	f.T.Helper()
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pdb), pdb); err != nil {
		f.T.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, ExpectedPods: healthy,
		CurrentHealthy: healthy, DesiredHealthy: healthy - allowed, DisruptionsAllowed: allowed}
	if err := f.Env.Client.Status().Update(f.Ctx, pdb); err != nil {
		f.T.Fatal(err)
	}
}

// ready waits until the simulated kubelet runs the pod and reports it Ready: a budget
// guards only healthy pods.
func ready(f *stack.Fixture, pods ...*corev1.Pod) {
	f.T.Helper()
	for _, pod := range pods {
		f.Eventually("pod "+pod.Name+" is Ready", func() bool {
			got := &corev1.Pod{}
			if f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pod), got) != nil || got.Status.Phase != corev1.PodRunning {
				return false
			}
			for _, c := range got.Status.Conditions {
				if c.Type == corev1.PodReady {
					return c.Status == corev1.ConditionTrue
				}
			}
			return false
		})
	}
}

// blockedCondition returns the claim's DisruptionBlocked condition, or nil.
func blockedCondition(f *stack.Fixture, name string) *metav1.Condition {
	return meta.FindStatusCondition(f.Claim(name).Status.Conditions, v1beta1.ConditionDisruptionBlocked)
}

// heldBackBy waits until the claim says that the named budget keeps its node, and
// returns what it says.
func heldBackBy(f *stack.Fixture, claim, budget string) string {
	f.T.Helper()
	f.Eventually("claim "+claim+" says a budget keeps it", func() bool {
		c := blockedCondition(f, claim)
		return c != nil && c.Status == metav1.ConditionTrue
	})
	c := blockedCondition(f, claim)
	if c.Reason != disruption.ReasonPodDisruptionBudget || !strings.Contains(c.Message, "PodDisruptionBudget "+budget+" allows no disruption") {
		f.T.Fatalf("the condition says %s: %q; want it to name %s", c.Reason, c.Message, budget)
	}
	return c.Message
}

// blockedEvents lists the DisruptionBlocked Events about a claim.
func blockedEvents(f *stack.Fixture, claim string) []eventsv1.Event {
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events); err != nil {
		f.T.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range events.Items {
		if e.Regarding.Name == claim && e.Reason == disruption.ReasonDisruptionBlocked {
			out = append(out, e)
		}
	}
	return out
}

// stillRuns fails the test unless the claim runs, asked to.
func stillRuns(f *stack.Fixture, name, why string) {
	f.T.Helper()
	if got := f.Claim(name); got.Spec.DesiredState != v1beta1.DesiredRunning || got.Status.Phase != v1beta1.PhaseRunning {
		f.T.Fatalf("%s: claim %s is asked to be %s and is %s", why, name, got.Spec.DesiredState, got.Status.Phase)
	}
}

// Consolidation leaves alone a node whose pod a PodDisruptionBudget does not let go,
// and says so on the claim, once: the condition and an Event name the budget, and the
// passes after do not write them again. Once the budget allows a disruption, the
// condition clears and the node is consolidated. (The other node is kept by
// do-not-disrupt, so that the guarded one is the only one consolidation wants.) On main
// before the change, the guarded node was given back, and its drain held for good.
func TestConsolidationLeavesANodeItsBudgetGuards(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 2, idleOnRealTime)
	standby := f.WaitForPhase("web", 2, v1beta1.PhaseStandby)
	big := loaded(f, "big", standby[0].Status.NodeName, 0.5, func(p *corev1.Pod) {
		p.Annotations = map[string]string{v1beta1.AnnotationDoNotDisrupt: "true"}
	})
	guarded := loaded(f, "guarded", standby[1].Status.NodeName, 0.1, nil)
	pdb := guard(f, "guarded", 1, 0)
	claims := start(f, standby)
	ready(f, big, guarded)

	clk := testingclock.NewFakeClock(time.Now())
	d := stack.NewDisruption(t, f.Env, f.Cloud, clk)
	d.WaitFor(t, "both nodes run their pod, and the budget is known", func(s state.Snapshot) bool {
		return nodesWithOnePod(s) == 2 && len(s.PDBs) == 1
	})
	pass := func() {
		t.Helper()
		if _, err := d.Pass(f.Ctx); err != nil {
			t.Fatal(err)
		}
	}
	pass() // first sight of both nodes' workload
	clk.Step(2 * time.Hour)
	pass()

	note := heldBackBy(f, claims[1].Name, "default/guarded")
	stillRuns(f, claims[1].Name, "the guarded node was consolidated")
	f.Eventually("an Event names the budget", func() bool { return len(blockedEvents(f, claims[1].Name)) > 0 })
	if e := blockedEvents(f, claims[1].Name)[0]; e.Note != note {
		t.Fatalf("the Event says %q, the condition %q", e.Note, note)
	}

	written := f.Claim(claims[1].Name).ResourceVersion
	d.WaitFor(t, "the test's controller sees its own write", func(s state.Snapshot) bool {
		for _, c := range s.All {
			if c.Name == claims[1].Name {
				return c.ResourceVersion == written
			}
		}
		return false
	})
	for range 3 {
		pass()
	}
	if got := f.Claim(claims[1].Name).ResourceVersion; got != written {
		t.Fatalf("the passes after wrote the held claim again (resource version %s, then %s)", written, got)
	}
	if events := blockedEvents(f, claims[1].Name); len(events) != 1 || events[0].Series != nil {
		t.Fatalf("want one DisruptionBlocked Event, recorded once; got %d: %+v", len(events), events)
	}

	allow(f, pdb, 2, 1)
	d.WaitFor(t, "the budget allows a disruption", func(s state.Snapshot) bool {
		return len(s.PDBs) == 1 && s.PDBs[0].Status.DisruptionsAllowed == 1
	})
	pass()
	if c := blockedCondition(f, claims[1].Name); c.Status != metav1.ConditionFalse || c.Reason != disruption.ReasonNotBlocked {
		t.Fatalf("the budget lets the pod go now, and the condition still says %s: %s", c.Status, c.Message)
	}
	if got := f.Claim(claims[1].Name).Spec.DesiredState; got == v1beta1.DesiredRunning {
		t.Fatal("the node the budget let go is still asked to run; want it consolidated")
	}
	f.CheckInvariants()
}

// Two nodes whose pods share a budget that allows one disruption are not consolidated in
// one decision: the decision's own evictions count against the budget. The third node
// has room for both pods. On main before the change, both went at once, and the second
// drain waited on the budget.
func TestOneDecisionCountsItsEvictionsAgainstABudget(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 3, func(p *v1beta1.NodePool) {
		idleOnRealTime(p)
		p.Spec.Standby.Max = ptr.To[int32](3)
	})
	standby := f.WaitForPhase("web", 3, v1beta1.PhaseStandby)
	pods := []*corev1.Pod{
		loaded(f, "big", standby[0].Status.NodeName, 0.5, nil),
		loaded(f, "shared-a", standby[1].Status.NodeName, 0.1, func(p *corev1.Pod) { p.Labels["app"] = "shared" }),
		loaded(f, "shared-b", standby[2].Status.NodeName, 0.1, func(p *corev1.Pod) { p.Labels["app"] = "shared" }),
	}
	guard(f, "shared", 2, 1)
	claims := start(f, standby)
	ready(f, pods...)

	clk := testingclock.NewFakeClock(time.Now())
	d := stack.NewDisruption(t, f.Env, f.Cloud, clk)
	d.WaitFor(t, "the three nodes run their pod, and the budget is known", func(s state.Snapshot) bool {
		return nodesWithOnePod(s) == 3 && len(s.PDBs) == 1
	})
	for range 2 {
		if _, err := d.Pass(f.Ctx); err != nil {
			t.Fatal(err)
		}
		clk.Step(2 * time.Hour)
	}
	given := 0
	for _, c := range claims[1:] {
		if f.Claim(c.Name).Spec.DesiredState != v1beta1.DesiredRunning {
			given++
		}
	}
	if given != 1 {
		t.Fatalf("%d of the two nodes whose pods share a budget of one disruption were given back; want 1", given)
	}
	stillRuns(f, claims[0].Name, "the node with room for both pods")
	f.CheckInvariants()
}

// A drifted node whose pod a PodDisruptionBudget does not let go is not replaced: no
// standby node is started and nothing is launched for it, and the claim says why. Once
// the budget allows, it is replaced as usual. On main before the change, the replacement
// ran, and the node then sat Draining for good.
func TestADriftedNodeItsBudgetGuardsIsNotReplaced(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("web", 1, nil)
	claim := runningNodes(f, "web", 1)[0]
	pod := loaded(f, "guarded", claim.Status.NodeName, 0.5, nil)
	pdb := guard(f, "guarded", 1, 0)
	ready(f, pod)
	changeTemplate(f, "web")

	heldBackBy(f, claim.Name, "default/guarded")
	stillRuns(f, claim.Name, "the guarded drifted node")
	for _, c := range f.Claims("web") {
		if c.Name != claim.Name && c.Spec.DesiredState == v1beta1.DesiredRunning {
			t.Fatalf("claim %s was asked to run as a replacement for a node that cannot drain", c.Name)
		}
	}
	if f.EventSeen(claim.Name, disruption.ReasonDrifted) {
		t.Fatal("a replacement was started for the guarded node")
	}

	allow(f, pdb, 2, 1)
	replacedBeforeDraining(f, claim, disruption.ReasonDrifted)
	f.CheckInvariants()
}

// Expiry waits for PodDisruptionBudgets as drift does, unless the pool sets a
// terminationGracePeriod: such a pool bounds how long a node may live, and its expired node is
// replaced and drained, the pods a budget guards deleted once terminationGracePeriod passes. On
// main before the change, the expired node was replaced at once and sat Draining.
func TestAnExpiredNodeWaitsForItsBudgetUnlessThePoolBoundsTheDrain(t *testing.T) {
	f := stack.NewFixture(t, nil)
	pool := f.Pool("web", 1, nil)
	claim := runningNodes(f, "web", 1)[0]
	pod := loaded(f, "guarded", claim.Status.NodeName, 0.5, nil)
	guard(f, "guarded", 1, 0)
	ready(f, pod)
	second := time.Second
	stack.Patch(f, pool, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.ExpireAfter = &v1beta1.ExpiryDuration{Duration: &second}
	})

	heldBackBy(f, claim.Name, "default/guarded")
	stillRuns(f, claim.Name, "the guarded expired node")
	if f.EventSeen(claim.Name, disruption.ReasonExpired) {
		t.Fatal("a replacement was started for the guarded node")
	}

	stack.Patch(f, pool, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.TerminationGracePeriod = v1beta1.NewDuration(2 * time.Second)
	})
	replacedBeforeDraining(f, claim, disruption.ReasonExpired)
	f.Eventually("the guarded pod is deleted once the drain timeout passed", func() bool { return podGone(f, pod) })
	f.CheckInvariants()
}

func podGone(f *stack.Fixture, pod *corev1.Pod) bool {
	return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))
}

// A drain that a PodDisruptionBudget blocks for longer than the bound (here 2 s) is
// abandoned, for a node given back and for one to be terminated alike: the claim is
// asked to run again, its Node is uncordoned, the guarded pod stays, the claim says why,
// and the pool's budget of one node, which the drain held, lets an empty node go. The
// test writes the intent as disruption does when a budget changes after its choice. On
// main before the change, the node stayed Draining for good; and a removal could not be
// taken back at all, being a deletion.
func TestABlockedDrainIsAbandoned(t *testing.T) {
	for _, desired := range []v1beta1.DesiredState{v1beta1.DesiredStandby, v1beta1.DesiredTerminated} {
		t.Run(string(desired), func(t *testing.T) {
			f := stack.NewFixture(t, nil)
			opts := f.Opts
			opts.Disruption.AbandonDrainAfter = 2 * time.Second
			f.RestartOperator(opts)
			f.Pool("web", 2, func(p *v1beta1.NodePool) {
				quickly(4)(p)
				p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "1"}}
			})
			standby := f.WaitForPhase("web", 2, v1beta1.PhaseStandby)
			// The pod is there before the node runs, so that the node never runs empty.
			pod := loaded(f, "guarded", standby[0].Status.NodeName, 0.2, nil)
			guard(f, "guarded", 1, 0)
			guarded := start(f, standby[:1])[0]
			ready(f, pod)

			f.SetDesired(guarded.Name, desired)
			f.Eventually("the drain is blocked", func() bool { return f.EventSeen(guarded.Name, nodeclaim.ReasonDrainBlocked) })
			empty := start(f, standby[1:])[0]

			givenWhileDraining := false
			f.Eventually("the drain is abandoned and the node runs again", func() bool {
				got, other := f.Claim(guarded.Name), f.Claim(empty.Name)
				if got.Status.Phase == v1beta1.PhaseDraining && other.Spec.DesiredState != v1beta1.DesiredRunning {
					givenWhileDraining = true
				}
				return got.Spec.DesiredState == v1beta1.DesiredRunning && got.Status.Phase == v1beta1.PhaseRunning
			})
			if givenWhileDraining {
				t.Fatal("the empty node was given back while the drain held the pool's budget of one node")
			}
			node := f.Node(guarded.Status.NodeName)
			if node.Spec.Unschedulable || hasTaint(node, v1beta1.StandbyTaint.Key) {
				t.Fatalf("the node runs again but is still cordoned: unschedulable %v, taints %v", node.Spec.Unschedulable, node.Spec.Taints)
			}
			if podGone(f, pod) {
				t.Fatal("the guarded pod was removed")
			}
			if note, ok := f.EventNote(guarded.Name, disruption.ReasonDrainAbandoned); !ok || !strings.Contains(note, "default/guarded") {
				t.Fatalf("the DrainAbandoned Event %q should name the budget", note)
			}
			heldBackBy(f, guarded.Name, "default/guarded")
			f.Eventually("the budget freed by the abandoned drain lets the empty node go", func() bool {
				return f.Claim(empty.Name).Spec.DesiredState == v1beta1.DesiredStandby
			})
			if got := stack.Counter(t, "stratos_disruption_drains_abandoned_total", map[string]string{"nodepool": "web"}); got < 1 {
				t.Fatalf("stratos_disruption_drains_abandoned_total is %v", got)
			}
			stillRuns(f, guarded.Name, fmt.Sprintf("after the abandoned drain to %s", desired))
			f.CheckInvariants()
		})
	}
}

func hasTaint(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

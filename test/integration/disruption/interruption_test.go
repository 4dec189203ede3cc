package disruption_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/disruption"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/test/stack"
)

// markInterrupted records on the claim what the interruption controller records for a
// notice: status.interruption and the Interrupted condition, with the notice's kind as
// its reason, in a status patch. The deadline is notice from now (none for zero); the
// deadline returned is the one the claim holds, which the API server keeps to the second.
func markInterrupted(f *stack.Fixture, name string, kind v1beta1.InterruptionKind, notice time.Duration) time.Time {
	f.T.Helper()
	claim := f.Claim(name)
	base := claim.DeepCopy()
	now := time.Now()
	claim.Status.Interruption = &v1beta1.Interruption{Kind: kind, NoticeTime: metav1.NewTime(now)}
	if notice > 0 {
		claim.Status.Interruption.Deadline = ptr.To(metav1.NewTime(now.Add(notice)))
	}
	meta.SetStatusCondition(&claim.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionInterrupted, Status: metav1.ConditionTrue,
		Reason: string(kind), Message: "The test gave the notice", LastTransitionTime: metav1.NewTime(now)})
	if err := f.Env.Client.Status().Patch(f.Ctx, claim, client.MergeFrom(base)); err != nil {
		f.T.Fatal(err)
	}
	if claim.Status.Interruption.Deadline == nil {
		return time.Time{}
	}
	return claim.Status.Interruption.Deadline.Time
}

// standbyBeside waits until the pool refilled its warm pool beside the running claim.
func standbyBeside(f *stack.Fixture, pool, running string) {
	f.T.Helper()
	f.Eventually("the pool stands a node by beside "+running, func() bool {
		return slices.ContainsFunc(f.Claims(pool), func(c v1beta1.NodeClaim) bool {
			return c.Name != running && c.Status.Phase == v1beta1.PhaseStandby
		})
	})
}

// claimChanges records every change of the cluster's claims, in the order the API
// server made them (a watch delivers them in resourceVersion order).
type claimChanges struct {
	mu      sync.Mutex
	changes []claimChange
}

type claimChange struct {
	kind  watch.EventType
	claim v1beta1.NodeClaim
}

// watchClaims starts recording the claims' changes; existing claims come first, as
// added.
func watchClaims(f *stack.Fixture) *claimChanges {
	f.T.Helper()
	wc, err := client.NewWithWatch(f.Env.Config, client.Options{Scheme: f.Env.Scheme})
	if err != nil {
		f.T.Fatal(err)
	}
	w, err := wc.Watch(f.Ctx, &v1beta1.NodeClaimList{})
	if err != nil {
		f.T.Fatal(err)
	}
	f.T.Cleanup(w.Stop)
	log := &claimChanges{}
	go func() {
		for ev := range w.ResultChan() {
			if claim, ok := ev.Object.(*v1beta1.NodeClaim); ok {
				log.mu.Lock()
				log.changes = append(log.changes, claimChange{kind: ev.Type, claim: *claim})
				log.mu.Unlock()
			}
		}
	}()
	return log
}

// first is the index of the first change of the named claim that matches, or -1.
func (l *claimChanges) first(name string, match func(watch.EventType, *v1beta1.NodeClaim) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.changes {
		if c := &l.changes[i]; c.claim.Name == name && match(c.kind, &c.claim) {
			return i
		}
	}
	return -1
}

func askedTo(desired v1beta1.DesiredState) func(watch.EventType, *v1beta1.NodeClaim) bool {
	return func(_ watch.EventType, c *v1beta1.NodeClaim) bool { return c.Spec.DesiredState == desired }
}

func inPhase(phase v1beta1.NodeClaimPhase) func(watch.EventType, *v1beta1.NodeClaim) bool {
	return func(_ watch.EventType, c *v1beta1.NodeClaim) bool { return c.Status.Phase == phase }
}

// A spot node that holds a pod is interrupted with EC2's two minutes of notice: a
// standby node of its pool is asked to run, and runs, before the interrupted claim is
// asked to be terminated, and then the interrupted node drains and goes; the decision
// shows as Interrupted in the decision metrics. Without the interruption handling the
// node keeps running until its instance dies.
func TestAnInterruptedNodeIsReplacedFromStandbyBeforeItDrains(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("interrupted", 1, idleOnRealTime)
	claim := runningNodes(f, "interrupted", 1)[0]
	loaded(f, "web-0", claim.Status.NodeName, 0.5, nil)
	standbyBeside(f, "interrupted", claim.Name)
	changes := watchClaims(f)
	markInterrupted(f, claim.Name, v1beta1.InterruptionSpot, 2*time.Minute)

	var note string
	f.Eventually("a replacement is chosen", func() bool {
		var ok bool
		note, ok = f.EventNote(claim.Name, disruption.ReasonInterrupted)
		return ok && strings.Contains(note, "replacing it with")
	})
	replacement := replacementIn(t, note)
	f.Eventually("the interrupted node goes", func() bool { return gone(f, claim.Name) })

	asked := changes.first(replacement, askedTo(v1beta1.DesiredRunning))
	ran := changes.first(replacement, inPhase(v1beta1.PhaseRunning))
	drained := changes.first(claim.Name, askedTo(v1beta1.DesiredTerminated))
	if was := changes.first(replacement, inPhase(v1beta1.PhaseStandby)); was < 0 || was > asked {
		t.Fatalf("the replacement %s was not a standby node when it was asked to run", replacement)
	}
	if asked < 0 || ran < 0 || drained < 0 || asked > drained || ran > drained {
		t.Fatalf("the standby node was asked to run at change %d and ran at change %d; the interrupted node was asked to go at change %d: want both before", asked, ran, drained)
	}
	wantDecisions(t, "interrupted", disruption.ReasonInterrupted, map[string]float64{"replace": 1, "terminate": 1})
	f.CheckInvariants()
}

// Disruption budgets of 0 hold every voluntary disruption, and do not hold an
// interrupted node's replacement: the node is replaced and goes. With the reason
// counted against the budgets, it would stay until the instance died.
func TestABudgetOfZeroDoesNotStopAnInterruptedReplacement(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("interrupted-budget", 1, func(p *v1beta1.NodePool) {
		idleOnRealTime(p)
		p.Spec.Disruption.Budgets = []v1beta1.Budget{{Nodes: "0"}}
	})
	claim := runningNodes(f, "interrupted-budget", 1)[0]
	loaded(f, "web-0", claim.Status.NodeName, 0.5, nil)
	markInterrupted(f, claim.Name, v1beta1.InterruptionScheduledChange, 10*time.Minute)

	replacement := replacedBeforeDraining(f, claim, disruption.ReasonInterrupted)
	if !running(f, replacement) {
		t.Fatalf("the replacement %s does not run", replacement)
	}
	f.CheckInvariants()
}

// The drain of an interrupted node whose pod a PodDisruptionBudget guards waits for the
// budget until shortly before the deadline, then deletes the pod, with a DrainForced
// Event, and ends before the deadline: the node is gone by then. Without the deadline,
// the drain would wait on the budget past the instance's death.
func TestABlockingBudgetIsForcedBeforeTheDeadline(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("interrupted-pdb", 1, idleOnRealTime)
	claim := runningNodes(f, "interrupted-pdb", 1)[0]
	pod := loaded(f, "guarded", claim.Status.NodeName, 0.5, nil)
	guard(f, "guarded", 1, 0)
	ready(f, pod)
	standbyBeside(f, "interrupted-pdb", claim.Name)
	deadline := markInterrupted(f, claim.Name, v1beta1.InterruptionSpot, 40*time.Second)

	f.Eventually("the drain is blocked by the budget", func() bool { return f.EventSeen(claim.Name, nodeclaim.ReasonDrainBlocked) })
	if podGone(f, pod) {
		t.Fatal("the guarded pod went while its budget blocked the eviction")
	}
	var podWent time.Time
	f.Eventually("the guarded pod is deleted", func() bool {
		if podGone(f, pod) {
			podWent = time.Now()
			return true
		}
		return false
	})
	var nodeWent time.Time
	f.Eventually("the interrupted node goes", func() bool {
		if gone(f, claim.Name) {
			nodeWent = time.Now()
			return true
		}
		return false
	})
	if !podWent.Before(deadline) || !nodeWent.Before(deadline) {
		t.Fatalf("the pod went at %s and the node at %s, after the deadline %s", podWent, nodeWent, deadline)
	}
	f.WaitForEvent(claim.Name, nodeclaim.ReasonDrainForced)
	forced := forcedAt(f, claim.Name)
	if forced.IsZero() {
		t.Fatalf("no %s Event on the claim: %v", nodeclaim.ReasonDrainForced, f.EventReasons(claim.Name))
	}
	// The budget was respected until the margin before the deadline (the Event's time
	// has a microsecond's precision; the API server's and the test's clocks are one; the
	// lifecycle controller wakes within 10 ms of the moment).
	if forced.Before(deadline.Add(-nodeclaim.DeadlineForceMargin - 100*time.Millisecond)) {
		t.Fatalf("the drain was forced at %s, %s before the deadline; want at most %s", forced, deadline.Sub(forced), nodeclaim.DeadlineForceMargin)
	}
	t.Logf("before the deadline: drain forced %s, pod gone %s, node gone %s",
		deadline.Sub(forced).Round(time.Millisecond), deadline.Sub(podWent).Round(time.Millisecond), deadline.Sub(nodeWent).Round(time.Millisecond))
	f.CheckInvariants()
}

// forcedAt is when the claim's drain was forced, from its DrainForced Event; zero when
// it was not.
func forcedAt(f *stack.Fixture, claim string) time.Time {
	events := &eventsv1.EventList{}
	if err := f.Env.Client.List(f.Ctx, events); err != nil {
		f.T.Fatal(err)
	}
	i := slices.IndexFunc(events.Items, func(e eventsv1.Event) bool {
		return e.Regarding.Name == claim && e.Reason == nodeclaim.ReasonDrainForced && e.Type == corev1.EventTypeWarning
	})
	if i < 0 {
		return time.Time{}
	}
	return events.Items[i].EventTime.Time
}

// A standby node that is interrupted holds no pod: it is terminated, and the pool
// refills its warm pool with a new one.
func TestAnInterruptedStandbyNodeIsTerminated(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("interrupted-standby", 1, idleOnRealTime)
	claim := f.WaitForPhase("interrupted-standby", 1, v1beta1.PhaseStandby)[0]
	markInterrupted(f, claim.Name, v1beta1.InterruptionSpot, 2*time.Minute)

	f.Eventually("the interrupted standby node goes", func() bool { return gone(f, claim.Name) })
	f.Eventually("a new standby node refills the warm pool", func() bool {
		claims := f.Claims("interrupted-standby")
		return len(claims) == 1 && claims[0].Name != claim.Name && claims[0].Status.Phase == v1beta1.PhaseStandby
	})
	f.CheckInvariants()
}

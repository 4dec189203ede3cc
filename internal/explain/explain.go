package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/podstartup"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/podscope"
	"github.com/stratos-sh/stratos/internal/podutil"
)

// Explanation is what `stratos explain pod` prints, as text or as JSON.
type Explanation struct {
	Pod   string          `json:"pod"`
	Phase corev1.PodPhase `json:"phase"`
	// Summary is the answer in a sentence or two.
	Summary string `json:"summary"`
	// Scheduler is what kube-scheduler said, from the pod's PodScheduled condition.
	Scheduler *Scheduler `json:"scheduler,omitempty"`
	// Scope is whether provisioning acts on the pod; only for a pod not bound.
	Scope *Scope `json:"scope,omitempty"`
	// Provisioning are the Events provisioning recorded on the pod, latest first.
	Provisioning []Record `json:"provisioning,omitempty"`
	Node         string   `json:"node,omitempty"`
	// NodeClaim is the claim behind the pod's Node, or the one it was placed on.
	NodeClaim *Claim   `json:"nodeClaim,omitempty"`
	Path      Path     `json:"path,omitempty"`
	Latency   *Latency `json:"latency,omitempty"`
	// Blockers are what keeps capacity from the pod, or may: pools left out of
	// provisioning, pools and claims that report a problem, volumes.
	Blockers []Blocker `json:"blockers,omitempty"`
}

// Scheduler is kube-scheduler's view of the pod.
type Scheduler struct {
	// Status of the PodScheduled condition: True, False or Unknown; empty when absent.
	Status  string    `json:"status,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	Since   time.Time `json:"since,omitzero"`
}

// Record is an Event, as the explanation shows it.
type Record struct {
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Count   int32     `json:"count"`
	Last    time.Time `json:"last"`
}

// Claim is what the explanation shows of a NodeClaim.
type Claim struct {
	Name string `json:"name"`
	// Gone is true when the claim no longer exists.
	Gone         bool   `json:"gone,omitempty"`
	NodePool     string `json:"nodePool,omitempty"`
	Phase        string `json:"phase,omitempty"`
	DesiredState string `json:"desiredState,omitempty"`
	// PhaseSince is when the claim entered its phase.
	PhaseSince time.Time `json:"phaseSince,omitzero"`
	// Warnings are the claim's latest Warning Events, latest first.
	Warnings []Record `json:"warnings,omitempty"`
}

// Latency is how long the pod took from its creation to each milestone it reached, in
// seconds, from the pod's own timestamps (kept to the second by the API server).
type Latency struct {
	Scheduled *float64 `json:"scheduledSeconds,omitempty"`
	Running   *float64 `json:"runningSeconds,omitempty"`
	Ready     *float64 `json:"readySeconds,omitempty"`
}

// Blocker is something that keeps, or may keep, capacity from the pod.
type Blocker struct {
	// Kind is a reason: Paused, KillSwitch, Deleting (a pool's), a pool's Degraded
	// reason (LimitReached, NodeClassNotReady, ...), a claim's failed condition's reason,
	// or WaitingForVolumes.
	Kind     string `json:"kind"`
	NodePool string `json:"nodePool,omitempty"`
	Message  string `json:"message"`
}

// recentWarnings bounds the claim's Warning Events shown.
const recentWarnings = 3

// Explain explains the pod of f.
func Explain(f Facts) Explanation {
	pod := f.Pod
	e := Explanation{Pod: pod.Namespace + "/" + pod.Name, Phase: pod.Status.Phase, Scheduler: schedulerView(pod)}
	e.Provisioning = records(f.PodEvents, func(ev Event) bool {
		return ev.Reason == provisioning.ReasonNoPoolFits || ev.Reason == provisioning.ReasonWaitingForVolumes
	})
	if f.ClaimName != "" {
		e.NodeClaim = claimOf(f)
	}
	if pod.Spec.NodeName != "" {
		explainBound(&e, f)
	} else {
		explainPending(&e, f)
	}
	return e
}

func explainBound(e *Explanation, f Facts) {
	pod := f.Pod
	e.Node = pod.Spec.NodeName
	e.Path = boundPath(pod, f.Node, f.Claim)
	e.Latency = latencyOf(pod)
	where := "node " + e.Node
	if f.Claim != nil {
		where += fmt.Sprintf(" (NodeClaim %s of NodePool %s)", f.Claim.Name, f.Claim.Spec.NodePool)
	}
	state := "Bound to"
	if pod.Status.Phase == corev1.PodRunning {
		state = "Running on"
	}
	e.Summary = fmt.Sprintf("%s %s: %s.", state, where, boundPhrase(e.Path))
	if l := e.Latency.text(); l != "" {
		e.Summary += " From creation: " + l + "."
	}
}

func boundPhrase(p Path) string {
	switch p {
	case PathStandby:
		return "started from standby for it"
	case PathCold:
		return "launched cold for it"
	case PathExisting:
		return "the node was serving already when the pod was created"
	case PathNotStratos:
		return "the node is not one of Stratos's"
	}
	return "its Node is gone, and with it what tells how the pod got it"
}

func explainPending(e *Explanation, f Facts) {
	scope := scopeOf(f.Pod)
	scope.OptedIn = podscope.OptsIn(f.Pod, podscope.PoolTaints(f.Pools))
	e.Scope = &scope
	e.Blockers = poolBlockers(f.Pools)
	if !scope.Provisionable {
		e.Summary = "Pending. Stratos does not look for capacity for it: " + scope.Why + "."
		return
	}
	if claim := f.Claim; claim != nil && claim.DeletionTimestamp.IsZero() && claim.Spec.DesiredState == v1beta1.DesiredRunning {
		e.Path = pendingPath(f.Pod, claim)
		e.Blockers = append(claimBlockers(claim, f.Pools), e.Blockers...)
		e.Summary = fmt.Sprintf("Pending. Stratos placed it on NodeClaim %s of NodePool %s, %s; the claim is %s since %s.",
			claim.Name, claim.Spec.NodePool, pendingPhrase(e.Path), phaseOf(claim), since(e.NodeClaim.PhaseSince, f.Now))
		return
	}
	if f.ClaimName != "" {
		// The claim it was placed on is gone, or no longer asked to run: the nomination
		// lapses (15 minutes at most) and provisioning decides again.
		e.Summary = fmt.Sprintf("Pending. Stratos had placed it on NodeClaim %s, which is gone or no longer asked to run; provisioning decides on it again once that nomination lapses.", f.ClaimName)
	}
	if len(e.Provisioning) > 0 {
		latest := e.Provisioning[0]
		if latest.Reason == provisioning.ReasonWaitingForVolumes {
			e.Blockers = append([]Blocker{{Kind: latest.Reason, Message: latest.Message}}, e.Blockers...)
			e.Summary = "Pending. Its volumes keep it waiting, whatever the node: " + latest.Message
		} else {
			e.Summary = "Pending. No NodePool can make a node for it: " + strings.TrimPrefix(latest.Message, "No node can be made for the pod. ")
		}
		return
	}
	if e.Summary == "" {
		e.Summary = "Pending. kube-scheduler marked it Unschedulable " + since(e.Scheduler.Since, f.Now) + ", and Stratos has recorded no decision about it yet (it decides within about a second of the mark: check that the operator runs and that one replica leads)."
	}
}

func pendingPhrase(p Path) string {
	switch p {
	case PathStandby:
		return "a standby node started for it"
	case PathCold:
		return "a node launched for it"
	}
	return "a node already on its way for other pods, with room for it"
}

// poolBlockers lists the pools provisioning leaves out (paused, stopped by their kill
// switch, being deleted) and those whose Degraded condition is True.
func poolBlockers(pools []v1beta1.NodePool) []Blocker {
	var out []Blocker
	for i := range pools {
		pool := &pools[i]
		switch {
		case !pool.DeletionTimestamp.IsZero():
			out = append(out, Blocker{Kind: "Deleting", NodePool: pool.Name, Message: "the pool is being deleted: provisioning makes and starts no node of it"})
		case pool.Spec.KillSwitch:
			out = append(out, Blocker{Kind: "KillSwitch", NodePool: pool.Name, Message: "the pool's kill switch is on (spec.killSwitch): its nodes are drained and terminated, and provisioning makes and starts none"})
		case pool.Spec.Paused:
			out = append(out, Blocker{Kind: "Paused", NodePool: pool.Name, Message: "the pool is paused (spec.paused): provisioning makes and starts no node of it"})
		default:
			if d := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded); d != nil && d.Status == metav1.ConditionTrue {
				out = append(out, Blocker{Kind: d.Reason, NodePool: pool.Name, Message: d.Message})
			}
		}
	}
	return out
}

// claimBlockers lists what holds the claim a pod waits for: a failed condition (a
// launch the cloud refuses, a start refused, an instance lost) and, when its pool is
// paused, that the claim's instance is neither launched nor started meanwhile.
func claimBlockers(claim *v1beta1.NodeClaim, pools []v1beta1.NodePool) []Blocker {
	var out []Blocker
	for _, t := range []string{v1beta1.ConditionLaunched, v1beta1.ConditionStarted} {
		if c := meta.FindStatusCondition(claim.Status.Conditions, t); c != nil && c.Status == metav1.ConditionFalse {
			out = append(out, Blocker{Kind: c.Reason, NodePool: claim.Spec.NodePool, Message: fmt.Sprintf("NodeClaim %s: %s", claim.Name, c.Message)})
		}
	}
	if c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionInstanceLost); c != nil && c.Status == metav1.ConditionTrue {
		out = append(out, Blocker{Kind: c.Reason, NodePool: claim.Spec.NodePool, Message: fmt.Sprintf("NodeClaim %s: %s", claim.Name, c.Message)})
	}
	return out
}

func claimOf(f Facts) *Claim {
	if f.Claim == nil {
		return &Claim{Name: f.ClaimName, Gone: true}
	}
	c := &Claim{Name: f.Claim.Name, NodePool: f.Claim.Spec.NodePool, Phase: phaseOf(f.Claim), DesiredState: string(f.Claim.Spec.DesiredState)}
	if t := f.Claim.Status.LastPhaseChangeTime; t != nil {
		c.PhaseSince = t.Time
	} else {
		c.PhaseSince = f.Claim.CreationTimestamp.Time
	}
	c.Warnings = records(f.ClaimEvents, func(ev Event) bool { return ev.Type == corev1.EventTypeWarning })
	if len(c.Warnings) > recentWarnings {
		c.Warnings = c.Warnings[:recentWarnings]
	}
	return c
}

func phaseOf(claim *v1beta1.NodeClaim) string {
	if claim.Status.Phase == "" {
		return string(v1beta1.PhaseLaunching)
	}
	return string(claim.Status.Phase)
}

func schedulerView(pod *corev1.Pod) *Scheduler {
	c := podutil.Condition(pod, corev1.PodScheduled)
	if c == nil {
		return &Scheduler{}
	}
	return &Scheduler{Status: string(c.Status), Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.Time}
}

// records are the events keep lets through, latest first.
func records(events []Event, keep func(Event) bool) []Record {
	var out []Record
	for _, ev := range events {
		if keep(ev) {
			out = append(out, Record{Reason: ev.Reason, Message: ev.Message, Count: ev.Count, Last: ev.Last})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Last.After(out[j].Last) })
	return out
}

func latencyOf(pod *corev1.Pod) *Latency {
	created := pod.CreationTimestamp.Time
	seconds := func(t time.Time, ok bool) *float64 {
		if !ok {
			return nil
		}
		s := max(t.Sub(created).Seconds(), 0)
		return &s
	}
	l := &Latency{}
	if c := podutil.Condition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionTrue {
		l.Scheduled = seconds(c.LastTransitionTime.Time, !c.LastTransitionTime.IsZero())
	}
	l.Running = seconds(podstartup.ReachedAt(pod, podstartup.MilestoneRunning))
	l.Ready = seconds(podstartup.ReachedAt(pod, podstartup.MilestoneReady))
	return l
}

func (l *Latency) text() string {
	if l == nil {
		return ""
	}
	var parts []string
	for _, m := range []struct {
		what string
		s    *float64
	}{{"scheduled", l.Scheduled}, {"running", l.Running}, {"ready", l.Ready}} {
		if m.s != nil {
			parts = append(parts, fmt.Sprintf("%s after %s", m.what, seconds(*m.s)))
		}
	}
	return strings.Join(parts, ", ")
}

func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

// since says how long ago t was, from now.
func since(t, now time.Time) string {
	if t.IsZero() {
		return "at a time not recorded"
	}
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), now.Sub(t).Round(time.Second))
}

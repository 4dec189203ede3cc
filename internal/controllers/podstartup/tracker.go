package podstartup

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/state"
)

// DefaultMaxTracked bounds the pods a Tracker remembers: a burst of this many pods is
// measured whole, and the memory stays a few megabytes.
const DefaultMaxTracked = 20000

// Tracker remembers, in memory, the pods provisioning decided on, and which of their
// milestones were observed, so that each is observed once. A pod leaves it once both
// milestones are observed or once it is deleted; when it is full, the pod created first
// makes room (a pod that waited that long for capacity says more in its Events than
// in a latency). A new leader learns the pods again from its first snapshot (Relearn).
// It is safe for concurrent use.
type Tracker struct {
	max int

	mu   sync.Mutex
	pods map[types.NamespacedName]*tracked
}

type tracked struct {
	uid      types.UID
	created  time.Time
	observed map[Milestone]bool
}

// NewTracker returns a tracker of at most max pods (DefaultMaxTracked when max <= 0).
func NewTracker(max int) *Tracker {
	if max <= 0 {
		max = DefaultMaxTracked
	}
	return &Tracker{max: max, pods: map[types.NamespacedName]*tracked{}}
}

func keyOf(pod *corev1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
}

// Track remembers pods provisioning decided on; a pod tracked already keeps what was
// observed of it.
func (t *Tracker) Track(pods []*corev1.Pod) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, pod := range pods {
		key := keyOf(pod)
		if p, ok := t.pods[key]; ok && p.uid == pod.UID {
			continue
		}
		if len(t.pods) >= t.max {
			t.evictOldestLocked()
		}
		t.pods[key] = &tracked{uid: pod.UID, created: pod.CreationTimestamp.Time, observed: map[Milestone]bool{}}
	}
}

// evictOldestLocked forgets the pod created first. It scans every pod, which only
// happens when the tracker is full.
func (t *Tracker) evictOldestLocked() {
	var oldest types.NamespacedName
	var when time.Time
	first := true
	for key, p := range t.pods {
		if first || p.created.Before(when) {
			oldest, when, first = key, p.created, false
		}
	}
	delete(t.pods, oldest)
}

// Relearn tracks what a new leader finds in its first snapshot: the pods waiting for
// capacity, and the pods provisioning placed on a claim before that are not Ready yet.
// A placed pod tolerates the claim's reservation taint, or, where the decision reserved
// nothing, is listed in its claim's stratos.sh/placed-pods (v1beta1.ListsPlacedPod);
// a pod bound to a Node of Stratos that registered after the pod was created (the cold
// path, as Classify reads it) counts as placed too, whatever the list (it is bounded). A milestone a pod reached before (Ready, or
// running for a pod not Ready yet) was the leader before's to observe, so it counts as
// observed: observing it again would count the pod twice.
func (t *Tracker) Relearn(snap state.Snapshot) {
	pods := append([]*corev1.Pod(nil), snap.Pending...)
	placed := func(claim *v1beta1.NodeClaim, node *corev1.Node, candidates []*corev1.Pod) {
		for _, pod := range candidates {
			if reserved(pod) || launchedFor(node, pod) || claim != nil && v1beta1.ListsPlacedPod(claim, pod) {
				if _, ready := ReachedAt(pod, MilestoneReady); !ready {
					pods = append(pods, pod)
				}
			}
		}
	}
	for _, n := range snap.Nodes {
		placed(nil, n.Node, n.Pods)
	}
	for _, c := range snap.Claims {
		placed(c.Claim, c.Node, c.Pods)
	}
	t.Track(pods)
	for _, pod := range pods {
		for _, m := range Milestones {
			if _, reached := ReachedAt(pod, m); reached {
				t.Observed(keyOf(pod), pod.UID, m)
			}
		}
	}
}

// reserved reports whether the pod tolerates a claim's reservation taint: provisioning
// placed it on that claim.
func reserved(pod *corev1.Pod) bool {
	for _, tol := range pod.Spec.Tolerations {
		if tol.Key == v1beta1.TaintReservedKey {
			return true
		}
	}
	return false
}

// launchedFor reports whether the pod is bound to a Node of Stratos (one of a pool)
// that registered no earlier than the pod was created: a Node launched while the pod
// waited, which only provisioning's placement explains.
func launchedFor(node *corev1.Node, pod *corev1.Pod) bool {
	if node == nil || pod.Spec.NodeName != node.Name || node.Labels[v1beta1.LabelNodePool] == "" {
		return false
	}
	return Classify(pod.CreationTimestamp.Time, Served{NodeCreated: node.CreationTimestamp.Time}) == PathCold
}

// Tracked reports whether the pod of that key and UID is tracked.
func (t *Tracker) Tracked(key types.NamespacedName, uid types.UID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.pods[key]
	return ok && p.uid == uid
}

// Waiting lists the milestones of the pod not observed yet; none when it is not tracked.
func (t *Tracker) Waiting(key types.NamespacedName, uid types.UID) []Milestone {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.pods[key]
	if !ok || p.uid != uid {
		return nil
	}
	var out []Milestone
	for _, m := range Milestones {
		if !p.observed[m] {
			out = append(out, m)
		}
	}
	return out
}

// Observed records a milestone of the pod as observed, and forgets the pod once every
// milestone is.
func (t *Tracker) Observed(key types.NamespacedName, uid types.UID, m Milestone) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.pods[key]
	if !ok || p.uid != uid {
		return
	}
	p.observed[m] = true
	if len(p.observed) == len(Milestones) {
		delete(t.pods, key)
	}
}

// Forget drops the pod of that key.
func (t *Tracker) Forget(key types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pods, key)
}

// Len is how many pods are tracked.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pods)
}

package state

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Snapshot is the picture at one moment. It shares objects with the cache: treat them
// as read-only.
type Snapshot struct {
	// All is every claim, those being deleted included, with this process's writes the
	// informer does not show yet. Limits and budgets count from it.
	All []*v1beta1.NodeClaim
	// Nodes that pods may use now and keep using: those that belong to no claim, and
	// those whose claim runs and is asked to go on running. Each comes with its pods,
	// and those nominated to its claim until kube-scheduler binds them.
	Nodes []NodeState
	// Claims not being deleted that do not serve as Nodes: those coming, standing by, or
	// running but asked back to standby, with the pods on their Node and those
	// nominated to them.
	Claims []ClaimState
	// Leaving are the workload pods bound to Nodes that are going away: their claim is
	// asked back to standby or to be terminated, or is being deleted. Each will need
	// room elsewhere, and those not evicted yet will take from their
	// PodDisruptionBudgets.
	Leaving []*corev1.Pod
	// Pending are the pods waiting for capacity that no live claim was nominated for.
	Pending []*corev1.Pod
	// DaemonSets of the cluster.
	DaemonSets []*appsv1.DaemonSet
	// PDBs are the cluster's PodDisruptionBudgets.
	PDBs []*policyv1.PodDisruptionBudget
	// Version changes whenever a pool, node class, Node, claim or storage object does.
	Version uint64
	// NextLapse is when the first nomination held now lapses because its claim has run
	// for BindGrace, or when a write the informer has not shown is forgotten (zero when
	// neither will happen): pods may wait for capacity again then, and provisioning
	// should look at them.
	NextLapse time.Time
}

// BindGrace is how long a pod nominated to a claim keeps counting on the claim's Node
// once the claim runs. Kube-scheduler binds it there within a second or two; a pod still
// unbound after the grace was left out (kube-scheduler filled the Node with other pods),
// so it waits for capacity again. The grace only has to cover the informers catching up
// with the Node the claim just readied: simulated again before that, the pod would not
// see the Node's room and would be given capacity twice.
const BindGrace = 5 * time.Second

// NodeState is a Node with the pods bound to it.
type NodeState struct {
	Node *corev1.Node
	Pods []*corev1.Pod
}

// ClaimState is a claim with its Node, if registered, and its pods.
type ClaimState struct {
	Claim *v1beta1.NodeClaim
	Node  *corev1.Node
	// Pods are bound to the claim's Node; Nominated were placed on the claim by
	// provisioning and wait for it.
	Pods, Nominated []*corev1.Pod
}

// servesPods reports whether a claim's Node is one pods may use and keep using: the
// claim runs, is asked to go on running and is not being deleted. A claim asked back to
// standby or deleted drains its Node; counting the Node as room in the moment before
// the drain cordons it would place pods on a node that is going away.
func servesPods(claim *v1beta1.NodeClaim) bool {
	return claim.DeletionTimestamp.IsZero() && claim.Status.Phase == v1beta1.PhaseRunning && claim.Spec.DesiredState == v1beta1.DesiredRunning
}

// leaving reports whether a claim's Node is going away with the pods bound to it: the
// claim is deleted, or asked to stand by or to be terminated.
func leaving(claim *v1beta1.NodeClaim) bool {
	desired := claim.Spec.DesiredState
	return !claim.DeletionTimestamp.IsZero() || desired == v1beta1.DesiredStandby || desired == v1beta1.DesiredTerminated
}

// Snapshot takes the picture, dropping the nominations that no longer hold (see
// holds). A pod nominated to a claim that runs counts on the claim's Node for BindGrace,
// so that its room is not given away before kube-scheduler binds it there.
func (c *Cluster) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	claims, writeExpires := c.claimsLocked(now)
	s := Snapshot{Version: c.version, NextLapse: writeExpires}
	nominated := map[string][]*corev1.Pod{}
	for uid, n := range c.nominations {
		claim := claims[n.claim]
		pod := c.pending[uid]
		lapse, ok := holds(n, claim, now)
		if !ok || pod == nil {
			delete(c.nominations, uid)
			continue
		}
		if !lapse.IsZero() && (s.NextLapse.IsZero() || lapse.Before(s.NextLapse)) {
			s.NextLapse = lapse
		}
		nominated[n.claim] = append(nominated[n.claim], pod)
	}
	claimNodes := map[string]bool{}
	onNode := map[string][]*corev1.Pod{}
	for _, claim := range claims {
		s.All = append(s.All, claim)
		node := c.nodes[claim.Status.NodeName]
		if node != nil {
			claimNodes[node.Name] = true
			if leaving(claim) {
				s.Leaving = append(s.Leaving, workloads(c.podsByNode[node.Name])...)
			}
		}
		if !claim.DeletionTimestamp.IsZero() {
			continue
		}
		if node != nil && servesPods(claim) {
			onNode[node.Name] = nominated[claim.Name] // the Node is one like the others now
			continue
		}
		cs := ClaimState{Claim: claim, Nominated: nominated[claim.Name]}
		if node != nil {
			cs.Node = node
			cs.Pods = podList(c.podsByNode[node.Name])
		}
		s.Claims = append(s.Claims, cs)
	}
	for name, node := range c.nodes {
		pods, serving := onNode[name]
		if claimNodes[name] && !serving {
			continue // a claim's Node that does not serve pods is the claim's
		}
		s.Nodes = append(s.Nodes, NodeState{Node: node, Pods: append(podList(c.podsByNode[name]), pods...)})
	}
	for uid, pod := range c.pending {
		if _, ok := c.nominations[uid]; !ok {
			s.Pending = append(s.Pending, pod)
		}
	}
	for _, ds := range c.daemonSets {
		s.DaemonSets = append(s.DaemonSets, ds)
	}
	for _, pdb := range c.pdbs {
		s.PDBs = append(s.PDBs, pdb)
	}
	return s
}

// holds reports whether a nomination still holds, and when it will lapse because its
// claim runs. It ends when the claim is gone or being deleted, when the TTL passed, when
// the claim is no longer asked to run (it went back to standby: nothing will start it
// for the pod), and BindGrace after the claim started running.
func holds(n nomination, claim *v1beta1.NodeClaim, now time.Time) (lapse time.Time, ok bool) {
	if claim == nil || !claim.DeletionTimestamp.IsZero() || now.After(n.expires) || claim.Spec.DesiredState != v1beta1.DesiredRunning {
		return time.Time{}, false
	}
	if claim.Status.Phase != v1beta1.PhaseRunning || claim.Status.LastPhaseChangeTime == nil {
		return time.Time{}, true
	}
	lapse = claim.Status.LastPhaseChangeTime.Add(BindGrace)
	return lapse, now.Before(lapse)
}

// Nominate records that pods will go on a claim, for ttl at most.
func (c *Cluster) Nominate(claim string, pods []*corev1.Pod, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	expires := c.clock.Now().Add(ttl)
	for _, pod := range pods {
		c.nominations[pod.UID] = nomination{claim: claim, expires: expires}
	}
}

// Reserve sets whether a claim's Node is to open reserved to the pods nominated to it.
// Provisioning reserves only the claims of decisions where the reservation can change
// where pods land, and sets the mark of each claim it starts or launches, so that a
// warm claim started again does not keep the mark of an earlier start. The mark is
// forgotten with the claim.
func (c *Cluster) Reserve(claim string, reserved bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if reserved {
		c.reserved[claim] = true
	} else {
		delete(c.reserved, claim)
	}
}

// Reserved reports whether a claim was marked by Reserve.
func (c *Cluster) Reserved(claim string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.reserved[claim]
}

// NominatedTo returns the pods nominated to a claim that still wait for capacity: not
// bound, and still marked Unschedulable.
func (c *Cluster) NominatedTo(claim string) []*corev1.Pod {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var pods []*corev1.Pod
	for uid, n := range c.nominations {
		if pod := c.pending[uid]; n.claim == claim && pod != nil {
			pods = append(pods, pod)
		}
	}
	return pods
}

// Nominated returns the claim a pod is nominated to, if any.
func (c *Cluster) Nominated(uid types.UID) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n, ok := c.nominations[uid]
	return n.claim, ok
}

func podList(pods map[types.UID]*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		out = append(out, pod)
	}
	return out
}

// workloads lists the workload pods among pods.
func workloads(pods map[types.UID]*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range pods {
		if Workload(pod) {
			out = append(out, pod)
		}
	}
	return out
}
